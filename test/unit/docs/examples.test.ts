import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * Every ```ts block of README.md and docs/*.md compiles against today's code. A block is a module of
 * its own whose relative imports start from its Markdown file (`../src/...` in docs/). A fragment
 * that needs context the reader does not (a `manager` in scope, say) gets it from an HTML comment
 * right before the fence, which renders as nothing:
 *
 *   <!-- preamble
 *   import type { Manager } from '../src/runtime/manager/manager.ts';
 *   declare const manager: Manager;
 *   -->
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface Example {
  /** The Markdown file, relative to the repository. */
  doc: string;
  /** The lines to compile, each with its line number in `doc`. */
  lines: { text: string; docLine: number }[];
}

function examplesIn(doc: string, markdown: string): Example[] {
  const lines = markdown.split('\n');
  const examples: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i] ?? '')) continue;
    const example: Example = { doc, lines: preambleBefore(lines, i) };
    for (i++; i < lines.length && lines[i] !== '```'; i++) {
      example.lines.push({ text: lines[i] ?? '', docLine: i + 1 });
    }
    examples.push(example);
  }
  return examples;
}

/** The lines of a `<!-- preamble ... -->` comment that ends right above line `fence`. */
function preambleBefore(lines: string[], fence: number): Example['lines'] {
  if (lines[fence - 1]?.trim() !== '-->') return [];
  for (let start = fence - 2; start >= 0; start--) {
    if (lines[start]?.trim() === '<!-- preamble') {
      return lines.slice(start + 1, fence - 1).map((text, k) => ({ text, docLine: start + 2 + k }));
    }
    if (lines[start]?.includes('<!--')) return [];
  }
  return [];
}

function documentationExamples(): Example[] {
  const docs = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ];
  return docs.flatMap((doc) => examplesIn(doc, readFileSync(join(ROOT, doc), 'utf8')));
}

/**
 * Compiles the examples with the repository's tsconfig. They are written to a scratch folder inside
 * the repository (so packages resolve from its node_modules) under their documents' paths, and
 * `rootDirs` lets their relative imports reach the repository's files. Returns tsc's complaints,
 * each pointing at its Markdown line.
 */
function compile(examples: Example[]): string[] {
  const scratch = mkdtempSync(join(ROOT, '.doc-examples-'));
  try {
    const files = new Map<string, Example>();
    for (const example of examples) {
      const file = join(scratch, `${example.doc}-${example.lines[0]?.docLine ?? 0}.ts`);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `${example.lines.map((l) => l.text).join('\n')}\n`);
      files.set(relative(ROOT, file), example);
    }
    writeFileSync(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({
        extends: relative(scratch, join(ROOT, 'tsconfig.json')),
        compilerOptions: { rootDirs: [relative(scratch, ROOT), '.'], moduleDetection: 'force', noEmit: true },
        include: [...files.keys()].map((file) => relative(scratch, join(ROOT, file))),
      }),
    );
    const tsc = spawnSync(
      join(ROOT, 'node_modules/.bin/tsc'),
      ['-p', relative(ROOT, join(scratch, 'tsconfig.json')), '--pretty', 'false'],
      { cwd: ROOT, encoding: 'utf8' },
    );
    if (tsc.status === 0) return [];
    const complaints: string[] = [];
    for (const line of `${tsc.stdout}${tsc.stderr}`.split('\n')) {
      if (line.trim() === '') continue;
      // A message's further lines are indented: they belong to the complaint above.
      if (/^\s/.test(line) && complaints.length > 0) {
        complaints[complaints.length - 1] += `\n${line}`;
        continue;
      }
      const at = /^(.+?)\((\d+),(\d+)\): (.*)$/.exec(line);
      const example = at ? files.get(at[1] ?? '') : undefined;
      const docLine = example?.lines[Number(at?.[2]) - 1]?.docLine;
      complaints.push(example && at ? `${example.doc}:${docLine}:${at[3]}: ${at[4]}` : line);
    }
    return complaints.length > 0 ? complaints : [`tsc exited with ${tsc.status}`];
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

describe('the TypeScript examples of the documentation', () => {
  it('finds ```ts blocks, the preamble before one, and the Markdown line of every line', () => {
    const markdown = [
      'Text.',
      '<!-- preamble',
      'declare const n: number;',
      '-->',
      '```ts',
      'const m: number = n;',
      '```',
      '```sh',
      'npm test',
      '```',
      '```ts',
      'export {};',
      '```',
    ].join('\n');
    assert.deepEqual(examplesIn('docs/x.md', markdown), [
      {
        doc: 'docs/x.md',
        lines: [
          { text: 'declare const n: number;', docLine: 3 },
          { text: 'const m: number = n;', docLine: 6 },
        ],
      },
      { doc: 'docs/x.md', lines: [{ text: 'export {};', docLine: 12 }] },
    ]);
  });

  it('reports an error at its line in the Markdown file', () => {
    const complaints = compile([
      {
        doc: 'docs/x.md',
        lines: [
          { text: "import { toMillis } from '../src/runtime/time.ts';", docLine: 10 },
          { text: 'const n: string = toMillis(0);', docLine: 11 },
        ],
      },
    ]);
    assert.equal(complaints.length, 1, complaints.join('\n'));
    assert.match(complaints[0] ?? '', /^docs\/x\.md:11:7: error TS2322: /);
  });

  it('compile against the code', () => {
    const examples = documentationExamples();
    assert.ok(examples.length > 0, 'no ```ts block found');
    assert.deepEqual(compile(examples), []);
  });
});
