import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseArgs } from '../../../src/cli/kubectl-basic/args.ts';
import { execute } from '../../../src/cli/kubectl-basic/run.ts';
import { jsonText, printable } from '../../../src/cli/kubectl-basic/terminal.ts';
import { cond, NOW, NS, obj, RecordedSource } from './recorded.ts';

/** Any character a terminal acts on: C0 but tab and newline, ESC, DEL, C1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

describe('printable', () => {
  it('strips escape sequences whole, so that none of their parameters are left behind', () => {
    assert.equal(printable('\x1b[31mred\x1b[0m and \x1b[1;2H\x1b[2Jcleared'), 'red and cleared');
    assert.equal(printable('a\x1b]0;pwned title\x07b'), 'ab'); // window title, BEL-terminated
    assert.equal(printable('a\x1b]52;c;ZXZpbA==\x1b\\b'), 'ab'); // clipboard write, ST-terminated
    assert.equal(printable('a\x1bPq#0;2;0;0;0\x1b\\b'), 'ab'); // DCS (sixel)
    assert.equal(printable('a\x9b31mb\x9d0;t\x9cc'), 'abc'); // C1 CSI and OSC
    assert.equal(printable('a\x1b7b\x1b(Bc\x1bcd'), 'abcd'); // save cursor, charset, reset
  });

  it('ends an unterminated string sequence at the end of its line', () => {
    assert.equal(printable('a\x1b]0;no end\nnext line'), 'a\nnext line');
  });

  it('strips C0 controls but tab and newline, DEL and C1; keeps other text as it is', () => {
    assert.equal(printable('over\rwrite\b\x00\x07\x7f\x85\x8d'), 'overwrite');
    assert.equal(printable('col\tcol\nline'), 'col\tcol\nline');
    assert.equal(printable('café 日本 ✓ 🚀 [brackets] ~'), 'café 日本 ✓ 🚀 [brackets] ~');
  });
});

describe('jsonText', () => {
  it('writes the same values, with nothing a terminal acts on', () => {
    const value = { message: 'a\x1b[2Jb\x9b31m\x7f\x00\r\tc', name: 'café' };
    const text = jsonText(value);
    assert.deepEqual(JSON.parse(text), value);
    assert.doesNotMatch(text, CONTROL);
    assert.match(text, /\\u009b/);
  });
});

describe('kubectl basic output', () => {
  const hostile = 'image pull failed\x1b]0;owned\x07\x1b[2J\x1b[1A\rReady: True';
  const machine = obj('Machine', 'db', {
    spec: { image: 'postgres:17' },
    status: {
      phase: 'Provisioning',
      conditions: [cond('Ready', 'False', 'Bad\x1b[8mHidden', hostile)],
    },
  });
  const source = new RecordedSource().add('Machine', machine);
  const invocation = (args: string[]) => {
    const parsed = parseArgs(args);
    if (parsed.help) throw new Error('help');
    return parsed.invocation;
  };

  for (const args of [
    ['why', 'machine/db'],
    ['tree', 'machine/db'],
  ]) {
    it(`prints no control characters from the cluster (${args[0]}), and -o json keeps their values`, async () => {
      const lines: string[] = [];
      const output = { out: (t: string) => lines.push(t), err: (t: string) => lines.push(t) };
      await execute(invocation(args), source, NS, output, NOW);
      await execute(invocation([...args, '-o', 'json']), source, NS, output, NOW);
      const [text = '', json = ''] = lines;
      assert.doesNotMatch(text, CONTROL);
      assert.doesNotMatch(json, CONTROL);
      assert.ok(json.includes(JSON.stringify(hostile).slice(1, -1)));
      if (args[0] === 'why') assert.match(text, /image pull failedReady: True/);
    });
  }
});
