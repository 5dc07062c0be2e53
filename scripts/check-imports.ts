// Checks the repository's import graph (run by `npm run lint`): no import cycle anywhere, and imports
// that go one way only. src/, the operator, imports nothing outside itself. The test bed in e2e/ is
// used by test/, bench/ and scripts/ and imports none of them; inside it, the cluster providers and
// image builders (e2e/providers) and the contract kit users run (e2e/contract) import nothing else of
// it, the helpers the suites, tests and benchmark share (e2e/support) build on the providers only,
// and the suites (e2e/suites) use all of them (docs/e2e.md#layout). The benchmark imports no test and
// no suite. A controller folder (src/controllers/<name>/) imports no other controller's folder: what
// two controllers share sits in src/controllers/shared/ or src/apis (docs/runtime.md).
//   node scripts/check-imports.ts
import { readdirSync } from 'node:fs';
import { parseCircular, parseDependencyTree, shortenTree } from 'dpdm';

const FOLDERS = ['src', 'test', 'e2e', 'bench', 'scripts', 'examples'];

/**
 * A file under `from` may not import one under any of `not`, unless that one is under one of `but`.
 * Every rule whose `from` holds the file applies.
 */
const RULES: { from: string; not: string[]; but?: string[] }[] = [
  { from: 'e2e/', not: ['test/', 'bench/', 'scripts/'] },
  { from: 'e2e/providers/', not: ['e2e/'], but: ['e2e/providers/'] },
  { from: 'e2e/contract/', not: ['e2e/'], but: ['e2e/contract/'] },
  { from: 'e2e/support/', not: ['e2e/'], but: ['e2e/support/', 'e2e/providers/'] },
  { from: 'bench/', not: ['test/', 'scripts/', 'e2e/suites/'] },
  { from: 'src/', not: ['test/', 'e2e/', 'bench/', 'scripts/', 'examples/'] },
  ...controllerFolderRules(),
];

/**
 * Of src/controllers, a controller's folder imports only itself, shared/, and the declaration type
 * and flags every controller is given; shared/ imports only itself.
 */
function controllerFolderRules(): { from: string; not: string[]; but: string[] }[] {
  const root = 'src/controllers/';
  const folders = readdirSync(root, { withFileTypes: true }).filter((entry) => entry.isDirectory());
  const shared = `${root}shared/`;
  return folders.map(({ name }) => {
    const folder = `${root}${name}/`;
    const but = folder === shared ? [shared] : [folder, shared, `${root}declaration.ts`, `${root}flags.ts`];
    return { from: folder, not: [root], but };
  });
}

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
const under = (id: string, folders: string[] = []) => folders.some((folder) => id.startsWith(folder));
for (const [file, dependencies] of Object.entries(tree)) {
  for (const rule of RULES.filter((r) => file.startsWith(r.from))) {
    for (const { id } of dependencies ?? []) {
      if (id && under(id, rule.not) && !under(id, rule.but)) {
        const except = rule.but ? ` except ${rule.but.join(', ')}` : '';
        problems.push(
          `${file} imports ${id}: ${rule.from} imports nothing from ${rule.not.join(', ')}${except}`,
        );
      }
    }
  }
}
for (const problem of problems) process.stderr.write(`${problem}\n`);
if (problems.length > 0) process.exit(1);
const files = Object.keys(tree).filter((file) => FOLDERS.some((folder) => file.startsWith(`${folder}/`)));
process.stdout.write(`imports: ${files.length} files, no cycle, one-way\n`);
