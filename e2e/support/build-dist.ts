import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runOk } from '../providers/exec.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STAMP = join(REPO_ROOT, 'dist', '.build-stamp');
const INPUTS = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
const LOCK_WAIT_MS = 300_000;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

/** What the build reads: every file of src/ and the compiler's settings, by path, size and time. */
function sourceFingerprint(): string {
  const hash = createHash('sha256');
  for (const path of [
    ...filesUnder(join(REPO_ROOT, 'src')),
    ...INPUTS.map((f) => join(REPO_ROOT, f)),
  ].sort()) {
    const stat = statSync(path, { throwIfNoEntry: false });
    hash.update(`${path}\0${stat?.size ?? -1}\0${stat?.mtimeMs ?? -1}\n`);
  }
  return hash.digest('hex');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A directory made atomically is the lock; one left by a process that died is taken over. */
async function withBuildLock<T>(work: () => Promise<T>): Promise<T> {
  const key = createHash('sha256').update(REPO_ROOT).digest('hex').slice(0, 12);
  const lock = join(tmpdir(), `basic-operator-build-${key}.lock`);
  const owner = join(lock, 'pid');
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(owner, String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readOrEmpty(owner));
      if (Number.isInteger(holder) && holder > 0 && !alive(holder)) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `dist/ is being built by process ${holder || '?'} for over ${LOCK_WAIT_MS / 1000} s (${lock})`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/**
 * `npm run build` (tsc -> dist/), what the Dockerfile's build stage runs, only when src/ changed
 * since the last build. Test files and benchmarks run in processes of their own and several start
 * the operator from dist/: a second build rewriting dist/ while another process starts it could
 * hand that one a half-written file. So builders take one lock, and the first builds while the
 * others wait and then find dist/ current.
 */
export async function buildDist(): Promise<'built' | 'current'> {
  return withBuildLock(async () => {
    const fingerprint = sourceFingerprint();
    if (readOrEmpty(STAMP) === fingerprint) return 'current';
    rmSync(STAMP, { force: true });
    await runOk('npm', ['run', 'build'], { cwd: REPO_ROOT, timeoutMs: 300_000 });
    writeFileSync(STAMP, fingerprint);
    return 'built';
  });
}
