// Checks the repository's import graph (run by `npm run lint`): no import cycle anywhere, and imports
// that go one way only. The test bed in e2e/ (cluster providers, image builders, the operator process
// and the helpers suites and benchmark share) is used by test/, bench/ and scripts/ and imports none of
// them; the benchmark imports no test; src/, the operator, imports nothing outside itself.
//   node scripts/check-imports.ts
import { parseCircular, parseDependencyTree, shortenTree } from 'dpdm';

const FOLDERS = ['src', 'test', 'e2e', 'bench', 'scripts', 'examples'];

/** A file under `from` may not import one under any of `not`. */
const RULES: { from: string; not: string[] }[] = [
  { from: 'e2e/', not: ['test/', 'bench/', 'scripts/'] },
  { from: 'bench/', not: ['test/', 'scripts/'] },
  { from: 'src/', not: ['test/', 'e2e/', 'bench/', 'scripts/', 'examples/'] },
];

const cwd = process.cwd();
const tree = shortenTree(
  cwd,
  await parseDependencyTree(
    FOLDERS.map((folder) => `${folder}/**/*.ts`),
    { context: cwd, tsconfig: 'tsconfig.json', skipDynamicImports: false },
  ),
);

const problems: string[] = [];
for (const cycle of parseCircular(tree)) problems.push(`import cycle: ${[...cycle, cycle[0]].join(' -> ')}`);
for (const [file, dependencies] of Object.entries(tree)) {
  const rule = RULES.find((r) => file.startsWith(r.from));
  if (!rule || !dependencies) continue;
  for (const { id } of dependencies) {
    if (id && rule.not.some((folder) => id.startsWith(folder))) {
      problems.push(`${file} imports ${id}: ${rule.from} imports nothing from ${rule.not.join(', ')}`);
    }
  }
}
for (const problem of problems) process.stderr.write(`${problem}\n`);
if (problems.length > 0) process.exit(1);
const files = Object.keys(tree).filter((file) => FOLDERS.some((folder) => file.startsWith(`${folder}/`)));
process.stdout.write(`imports: ${files.length} files, no cycle, one-way\n`);
