#!/usr/bin/env node
// `kubectl basic`: kubectl runs this when it is on the PATH as kubectl-basic. In a checkout it runs
// the TypeScript sources (Node strips the types); installed as a package (Node does not strip types
// under node_modules) or where there are no sources (the image), it runs the compiled dist/.
// Plain JavaScript that older Nodes parse: the version check must run before anything else loads.
import { existsSync, readFileSync } from 'node:fs';

/** package.json's `engines.node` (">=MAJOR.MINOR"), as [major, minor]; undefined if unreadable. */
function minimumNode() {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    const match = /^>=\s*(\d+)\.(\d+)/.exec(pkg.engines?.node ?? '');
    return match ? [Number(match[1]), Number(match[2])] : undefined;
  } catch {
    return undefined;
  }
}

const minimum = minimumNode();
const [major, minor] = process.versions.node.split('.').map(Number);
if (minimum && (major < minimum[0] || (major === minimum[0] && minor < minimum[1]))) {
  process.stderr.write(
    `error: kubectl-basic needs Node ${minimum.join('.')} or newer; ${process.execPath} is Node ${process.versions.node}\n`,
  );
  process.exit(1);
}

const source = new URL('../src/cli/kubectl-basic/main.ts', import.meta.url);
const built = new URL('../dist/cli/kubectl-basic/main.js', import.meta.url);
const useSource = existsSync(source) && !import.meta.url.includes('/node_modules/');
// Not awaited at the top level, which Nodes before 14.8 cannot parse.
import(useSource ? source.href : built.href);
