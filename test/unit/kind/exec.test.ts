import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { run } from '../../../e2e/providers/exec.ts';
import { pipe } from '../../../e2e/providers/kind/engine.ts';

/** More than a pipe buffer holds, so a child that never reads its stdin makes our write fail. */
const MORE_THAN_A_PIPE = 'x'.repeat(4 * 1024 * 1024);

describe('run(): a child that exits without reading its input', () => {
  it('resolves with the exit code instead of failing the caller with EPIPE', async () => {
    const result = await run('sh', ['-c', 'echo gone >&2; exit 3'], { input: MORE_THAN_A_PIPE });
    assert.equal(result.code, 3);
    assert.equal(result.stderr.trim(), 'gone');
  });

  it('closes the stdin of a child that is handed no input', async () => {
    const result = await run('sh', ['-c', 'cat; echo done'], { timeoutMs: 10_000 });
    assert.deepEqual(result, { code: 0, stdout: 'done\n', stderr: '' });
  });
});

describe('pipe(): a right side that exits without reading', () => {
  it('rejects with its exit and stderr instead of an EPIPE', async () => {
    await assert.rejects(
      pipe('head', ['-c', String(MORE_THAN_A_PIPE.length), '/dev/zero'], 'sh', [
        '-c',
        'echo refused >&2; exit 4',
      ]),
      (error: Error) => /exits .*4/.test(error.message) && error.message.includes('refused'),
    );
  });
});
