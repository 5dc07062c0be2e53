import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CONTROLLERS } from '../../../src/controllers/index.ts';
import { CHART_DIR } from './manifests.ts';

describe('values.schema.json', () => {
  it('offers a concurrency setting for every controller the operator registers', () => {
    const schema = JSON.parse(readFileSync(join(CHART_DIR, 'values.schema.json'), 'utf8')) as {
      properties: { concurrency: { properties: Record<string, unknown> } };
    };
    const controllers = CONTROLLERS.map((c) => c.name);
    assert.deepEqual(
      Object.keys(schema.properties.concurrency.properties).sort(),
      ['default', ...controllers].sort(),
    );
  });
});
