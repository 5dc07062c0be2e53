import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  boundedName,
  claimName,
  machineLabels,
  podName,
  restoreJobName,
} from '../../../src/controllers/machine/names.ts';
import { machine } from './fixtures.ts';

describe('boundedName', () => {
  it('keeps a name that fits', () => {
    assert.equal(boundedName('web-data', 63), 'web-data');
  });

  it('shortens a long name to the limit with a hash, deterministically and uniquely', () => {
    const a = boundedName(`${'a'.repeat(70)}-data`, 63);
    const b = boundedName(`${'a'.repeat(70)}-logs`, 63);
    assert.equal(a.length, 63);
    assert.match(a, /^a+-[0-9a-f]{8}$/);
    assert.notEqual(a, b);
    assert.equal(a, boundedName(`${'a'.repeat(70)}-data`, 63));
  });

  it('never leaves a dash or dot before the hash', () => {
    const name = boundedName(`${'a'.repeat(53)}.-bcdefghijklmnop`, 63);
    assert.match(name, /^a{53}-[0-9a-f]{8}$/);
  });
});

describe('child names', () => {
  it('names the pod after the Machine and each claim after the Machine and volume', () => {
    const m = machine();
    assert.equal(podName(m), 'web');
    assert.equal(claimName(m, { name: 'data' }), 'web-data');
    assert.equal(restoreJobName(m, { name: 'data' }), 'web-data-restore');
  });

  it('keeps restore Job names and label values within 63 characters', () => {
    const m = machine({}, 'm'.repeat(200));
    assert.ok(restoreJobName(m, { name: 'data' }).length <= 63);
    assert.ok(machineLabels(m)['infra.basicoperator.dev/machine']!.length <= 63);
    assert.equal(claimName(m, { name: 'data' }), `${'m'.repeat(200)}-data`);
  });
});
