#!/usr/bin/env node
// `kubectl basic`: kubectl runs this when it is on the PATH as kubectl-basic. In a checkout it runs
// the TypeScript sources (Node strips the types); installed as a package (Node does not strip types
// under node_modules) or where there are no sources (the image), it runs the compiled dist/.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli/kubectl-basic/main.ts', import.meta.url);
const built = new URL('../dist/cli/kubectl-basic/main.js', import.meta.url);
const useSource = existsSync(source) && !import.meta.url.includes('/node_modules/');
await import(useSource ? source.href : built.href);
