import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonLines } from '../../../src/runtime/client/json-lines.ts';

async function parse(chunks: (string | Buffer)[]): Promise<unknown[]> {
  async function* source() {
    for (const chunk of chunks) yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  }
  const out: unknown[] = [];
  for await (const value of jsonLines(source())) out.push(value);
  return out;
}

describe('jsonLines', () => {
  it('yields one document per line, several lines to a chunk', async () => {
    assert.deepEqual(await parse(['{"a":1}\n{"a":2}\n{"a":3}\n']), [{ a: 1 }, { a: 2 }, { a: 3 }]);
  });

  it('joins a line that spans chunks, however it is cut', async () => {
    const text = '{"type":"ADDED","object":{"name":"p-1"}}\n{"type":"DELETED","object":{"name":"p-2"}}\n';
    const expected = [
      { type: 'ADDED', object: { name: 'p-1' } },
      { type: 'DELETED', object: { name: 'p-2' } },
    ];
    for (let cut = 1; cut < text.length; cut++) {
      assert.deepEqual(await parse([text.slice(0, cut), text.slice(cut)]), expected, `cut at ${cut}`);
    }
    assert.deepEqual(await parse([...text]), expected, 'one byte to a chunk');
  });

  it('decodes a multi-byte character cut between chunks', async () => {
    const bytes = Buffer.from('{"message":"café ✓"}\n');
    const cut = bytes.indexOf(0xe2) + 1;
    assert.deepEqual(await parse([bytes.subarray(0, cut), bytes.subarray(cut)]), [{ message: 'café ✓' }]);
  });

  it('skips blank lines and parses a last line without its newline', async () => {
    assert.deepEqual(await parse(['\n{"a":1}\n  \n', '{"a":', '2}']), [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(await parse([]), []);
    assert.deepEqual(await parse(['\n\n']), []);
  });

  it('throws on a line that is not JSON', async () => {
    await assert.rejects(parse(['{"a":1}\n{oops}\n']), SyntaxError);
  });
});
