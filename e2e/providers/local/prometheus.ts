import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { run, runOk } from '../exec.ts';
import { withFileLock } from './lock.ts';
import { cacheRoot } from './toolchain.ts';

/**
 * Prometheus for the dashboard test: the binary of Debian's package, pinned, fetched with
 * `apt-get download` (no install, no system service) and unpacked with `dpkg-deb -x` into its own
 * folder of the cache. A cold fetch downloads about 19 MB. When the machine's package index no
 * longer has the pinned version (Debian replaced it with a point release), it says so and takes
 * the candidate version instead; the folder is named after the version actually unpacked.
 */
const PINNED_VERSION = '2.42.0+ds-5+deb12u1';

function prometheusDir(version: string): string {
  return join(cacheRoot(), 'prometheus', version.replace(/[^\w.+-]/g, '_'));
}

function binaryIn(dir: string): string {
  return join(dir, 'usr', 'bin', 'prometheus');
}

/** The path of Debian's prometheus binary, fetched first if it is not in the cache. */
export async function ensurePrometheus(): Promise<string> {
  const pinned = binaryIn(prometheusDir(PINNED_VERSION));
  if (existsSync(pinned)) return pinned;
  const parent = join(cacheRoot(), 'prometheus');
  mkdirSync(parent, { recursive: true });
  return withFileLock(join(parent, '.lock'), 10 * 60_000, async () => {
    if (existsSync(pinned)) return pinned;
    const started = Date.now();
    const work = mkdtempSync(join(parent, 'fetch-'));
    try {
      const version = await download(work);
      const dir = prometheusDir(version);
      const binary = binaryIn(dir);
      if (existsSync(binary)) return binary;
      const deb = readdirSync(work).find((f) => f.endsWith('.deb'));
      if (!deb) throw new Error(`apt-get download left no .deb in ${work}`);
      await runOk('dpkg-deb', ['-x', join(work, deb), join(work, 'root')]);
      rmSync(dir, { recursive: true, force: true });
      renameSync(join(work, 'root'), dir);
      process.stderr.write(
        `[prometheus] unpacked Debian's prometheus ${version} into ${dir} in ${((Date.now() - started) / 1000).toFixed(0)}s\n`,
      );
      return binary;
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
}

/** Downloads the package into `dir`; returns the version downloaded. */
async function download(dir: string): Promise<string> {
  process.stderr.write(`[prometheus] apt-get download prometheus=${PINNED_VERSION}\n`);
  if (await tryDownload(dir, `prometheus=${PINNED_VERSION}`)) return PINNED_VERSION;
  // No package index yet (a fresh container clears it) or the pinned version is gone from it.
  if (process.getuid?.() === 0) {
    await run('apt-get', ['update', '-qq'], { timeoutMs: 300_000 });
    if (await tryDownload(dir, `prometheus=${PINNED_VERSION}`)) return PINNED_VERSION;
  }
  const candidate = /Candidate:\s*(\S+)/.exec((await run('apt-cache', ['policy', 'prometheus'])).stdout)?.[1];
  if (!candidate || candidate === '(none)') {
    throw new Error(
      "Debian's prometheus package is not in this machine's package index (run `apt-get update` as root)",
    );
  }
  process.stderr.write(
    `[prometheus] ${PINNED_VERSION} is no longer in the package index; taking the candidate ${candidate}\n`,
  );
  if (!(await tryDownload(dir, `prometheus=${candidate}`))) {
    throw new Error(`apt-get download prometheus=${candidate} failed`);
  }
  return candidate;
}

async function tryDownload(dir: string, spec: string): Promise<boolean> {
  const result = await run('apt-get', ['download', '-qq', spec], { cwd: dir, timeoutMs: 300_000 });
  return result.code === 0;
}
