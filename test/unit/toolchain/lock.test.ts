import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { withFileLock } from '../../../e2e/providers/local/lock.ts';
import { tempDir } from '../../support/temp-dir.ts';

const root = tempDir('lock-test-');
const lockPath = () => join(mkdtempSync(join(root, 'case-')), 'x.lock');

test('holders of one lock never overlap', async () => {
  const path = lockPath();
  const order: string[] = [];
  await Promise.all(
    [1, 2, 3].map((i) =>
      withFileLock(path, 5000, async () => {
        order.push(`in${i}`);
        await new Promise((r) => setTimeout(r, 30));
        order.push(`out${i}`);
      }),
    ),
  );
  for (let i = 0; i < order.length; i += 2) {
    assert.equal(order[i]?.slice(2), order[i + 1]?.slice(3), `interleaved: ${order.join(',')}`);
  }
});

test('a lock left by a dead holder is taken over once stale', async () => {
  const path = lockPath();
  mkdirSync(path);
  const old = new Date(Date.now() - 120_000);
  utimesSync(path, old, old);
  assert.equal(await withFileLock(path, 2000, async () => 'ran'), 'ran');
});

test('waiting for a live holder ends at its deadline with the lock named', async () => {
  const path = lockPath();
  mkdirSync(path);
  await assert.rejects(
    withFileLock(path, 300, async () => 'never'),
    /waiting for the lock .*x\.lock/,
  );
});
