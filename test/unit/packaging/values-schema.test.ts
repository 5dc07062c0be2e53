import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CONTROLLER_NAME as BASIC_DEPLOYMENT_CONTROLLER } from '../../../src/controllers/basicdeployment/index.ts';
import { CONTROLLER_NAME as BASIC_REPLICA_SET_CONTROLLER } from '../../../src/controllers/basicreplicaset/index.ts';
import { CONTROLLER_NAME as MACHINE_CONTROLLER } from '../../../src/controllers/machine/index.ts';
import { CONTROLLER_NAME as MACHINE_BACKUP_CONTROLLER } from '../../../src/controllers/machinebackup/index.ts';
import { CONTROLLER_NAME as POD_MACHINE_CONTROLLER } from '../../../src/controllers/podmachine/index.ts';
import { CONTROLLER_NAME as VOLUME_BACKUP_CONTROLLER } from '../../../src/controllers/volumebackup/index.ts';
import { CHART_DIR } from './manifests.ts';

describe('values.schema.json', () => {
  it('offers a concurrency setting for every controller the operator registers', () => {
    const schema = JSON.parse(readFileSync(join(CHART_DIR, 'values.schema.json'), 'utf8')) as {
      properties: { concurrency: { properties: Record<string, unknown> } };
    };
    const controllers = [
      BASIC_DEPLOYMENT_CONTROLLER,
      BASIC_REPLICA_SET_CONTROLLER,
      MACHINE_CONTROLLER,
      MACHINE_BACKUP_CONTROLLER,
      POD_MACHINE_CONTROLLER,
      VOLUME_BACKUP_CONTROLLER,
    ];
    assert.deepEqual(
      Object.keys(schema.properties.concurrency.properties).sort(),
      ['default', ...controllers].sort(),
    );
  });
});
