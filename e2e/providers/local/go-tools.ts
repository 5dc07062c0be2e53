import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withFileLock } from './lock.ts';
import { cacheRoot, goCompile } from './toolchain.ts';

/**
 * Small Go programs the tests run (not part of the cluster): each is a wrapper module in
 * toolchain/<name> whose go.mod pins what it uses from the Go module proxy, built with the
 * toolchain's goCompile into its own folder of the cache. They have their own stamps, so building
 * one never changes the control plane's stamps (which would recreate the cluster).
 */
export type GoTool = 'kstatus' | 'argocd-lua';

const WRAPPERS = join(dirname(fileURLToPath(import.meta.url)), 'toolchain');

function toolsDir(): string {
  return join(cacheRoot(), 'go-tools', 'bin');
}

function fingerprint(source: string): string {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go']) hash.update(readFileSync(join(source, file)));
  return hash.digest('hex');
}

/** The path of `tool`, built first if missing or out of date (a cold build takes 10 to 30 s). */
export function ensureGoTool(tool: GoTool): Promise<string> {
  const dir = toolsDir();
  mkdirSync(dir, { recursive: true });
  return withFileLock(join(dir, '.lock'), 10 * 60_000, async () => {
    const source = join(WRAPPERS, tool);
    const binary = join(dir, tool);
    const stampFile = join(dir, `${tool}.stamp`);
    const print = fingerprint(source);
    if (existsSync(binary) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === print)
      return binary;
    const started = Date.now();
    process.stderr.write(`[go-tools] building ${tool} from the Go module proxy into ${dir}\n`);
    await goCompile({ packages: ['.'], out: binary, ldflags: '-s -w', cwd: source });
    writeFileSync(stampFile, print);
    process.stderr.write(`[go-tools] built ${tool} in ${((Date.now() - started) / 1000).toFixed(0)}s\n`);
    return binary;
  });
}
