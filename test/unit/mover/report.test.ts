// The lines the mover writes: paths shown on one line whatever their bytes, failures cut to fit
// Kubernetes' termination message.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { displayPath } from '../../../src/mover/display.ts';
import { MoverError } from '../../../src/mover/errors.ts';
import { failureLine, MAX_FAILURE_BYTES, successLine } from '../../../src/mover/report.ts';

describe('displayPath', () => {
  it('shows UTF-8 as text and escapes control characters, backslashes and bytes that are not UTF-8', () => {
    assert.equal(displayPath(Buffer.from('/source/with space/é')), '/source/with space/é');
    assert.equal(displayPath(Buffer.from('/a\nb\\c\u007f')), '/a\\x0ab\\\\c\\x7f');
    assert.equal(displayPath(Buffer.from([0x2f, 0x61, 0xff, 0x0a, 0x5c])), '/a\\xff\\x0a\\\\');
  });
});

describe('failureLine', () => {
  it('is `<reason>: <message>` on one line', () => {
    assert.equal(failureLine(new MoverError('IOError', 'one\ntwo')), 'IOError: one two');
  });

  it('is cut to 4000 bytes without splitting a character', () => {
    const line = failureLine(new MoverError('Mismatch', 'é'.repeat(3000)));
    const bytes = Buffer.byteLength(line);
    assert.ok(bytes <= MAX_FAILURE_BYTES && bytes >= MAX_FAILURE_BYTES - 1, String(bytes));
    assert.ok(!line.includes('\ufffd'));
  });
});

describe('successLine', () => {
  it('is JSON of version 1 with both manifests and the times', () => {
    const manifest = { files: 1, bytes: 2, digest: `sha256:${'a'.repeat(64)}` };
    const line = successLine({ source: manifest, target: manifest, copyMs: 3, manifestMs: 4 });
    assert.equal(
      line,
      `{"v":1,"source":{"files":1,"bytes":2,"digest":"sha256:${'a'.repeat(64)}"},` +
        `"target":{"files":1,"bytes":2,"digest":"sha256:${'a'.repeat(64)}"},"copyMs":3,"manifestMs":4}`,
    );
  });
});
