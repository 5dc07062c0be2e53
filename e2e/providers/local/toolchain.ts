import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../exec.ts';
import { withFileLock } from './lock.ts';
import { applySourcePatch, KWOK_PATCHES, type SourcePatch } from './toolchain/source-patches.ts';

/**
 * Builds the local control plane from upstream sources on the Go module proxy and caches the
 * binaries outside the repo, keyed by version. Nothing is downloaded as a prebuilt binary. kwok is
 * built with one fix to its pod informer (toolchain/source-patches.ts); everything else is upstream
 * as released.
 */
export const VERSIONS = {
  kubernetes: 'v1.36.3',
  etcd: 'v3.6.16',
  kwok: 'v0.8.0',
  helm: 'v3.22.0',
  kind: 'v0.31.0',
} as const;

const HERE = dirname(fileURLToPath(import.meta.url));
const WRAPPERS = join(HERE, 'toolchain');

export interface Toolchain {
  dir: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  kubectl: string;
  etcd: string;
  etcdctl: string;
  kwok: string;
  kwokctl: string;
  helm: string;
}

export function cacheRoot(): string {
  const base =
    process.env.BASIC_OPERATOR_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'basic-operator');
  return base;
}

export function toolchainDir(): string {
  return join(cacheRoot(), `k8s-${VERSIONS.kubernetes}`, 'bin');
}

export function toolchainPaths(dir = toolchainDir()): Toolchain {
  return {
    dir,
    kubeApiserver: join(dir, 'kube-apiserver'),
    kubeControllerManager: join(dir, 'kube-controller-manager'),
    kubeScheduler: join(dir, 'kube-scheduler'),
    kubectl: join(dir, 'kubectl'),
    etcd: join(dir, 'etcd'),
    etcdctl: join(dir, 'etcdctl'),
    kwok: join(dir, 'kwok'),
    kwokctl: join(dir, 'kwokctl'),
    helm: join(dir, 'helm'),
  };
}

interface BuildStep {
  name: string;
  outputs: string[];
  /** Inputs whose change forces a rebuild (besides the versions). */
  fingerprintFiles: string[];
  run(dir: string): Promise<void>;
}

export function versionLdflags(): string {
  const v = VERSIONS.kubernetes;
  const [major, minor] = v.replace(/^v/, '').split('.');
  const vars: Record<string, string> = {
    gitVersion: v,
    gitMajor: major!,
    gitMinor: minor!,
    gitTreeState: 'clean',
    gitCommit: '0000000000000000000000000000000000000000',
    buildDate: '2026-01-01T00:00:00Z',
  };
  const flags = ['-s', '-w'];
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    for (const [key, value] of Object.entries(vars)) flags.push(`-X ${pkg}.${key}=${value}`);
  }
  return flags.join(' ');
}

function steps(): BuildStep[] {
  const k8s = join(WRAPPERS, 'kubernetes');
  const etcd = join(WRAPPERS, 'etcd');
  return [
    {
      name: `kube-apiserver, kube-controller-manager, kube-scheduler, kubectl ${VERSIONS.kubernetes}`,
      outputs: ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl'],
      fingerprintFiles: [join(k8s, 'go.mod'), join(k8s, 'go.sum')],
      run: (dir) =>
        goCompile({
          packages: [
            'k8s.io/kubernetes/cmd/kube-apiserver',
            'k8s.io/kubernetes/cmd/kube-controller-manager',
            'k8s.io/kubernetes/cmd/kube-scheduler',
            'k8s.io/kubernetes/cmd/kubectl',
          ],
          out: `${dir}/`,
          ldflags: versionLdflags(),
          cwd: k8s,
        }),
    },
    {
      name: `etcd ${VERSIONS.etcd}`,
      outputs: ['etcd', 'etcdctl'],
      fingerprintFiles: [join(etcd, 'go.mod'), join(etcd, 'go.sum'), join(etcd, 'main.go')],
      run: async (dir) => {
        await goCompile({ packages: ['.'], out: join(dir, 'etcd'), ldflags: '-s -w', cwd: etcd });
        await goCompile({
          packages: ['go.etcd.io/etcd/etcdctl/v3'],
          out: join(dir, 'etcdctl'),
          ldflags: '-s -w',
          cwd: etcd,
        });
      },
    },
    {
      // Built from a copy of the module with KWOK_PATCHES applied (see source-patches.ts).
      name: `kwok, kwokctl ${VERSIONS.kwok}`,
      outputs: ['kwok', 'kwokctl'],
      fingerprintFiles: [join(WRAPPERS, 'source-patches.ts')],
      run: async (dir) => {
        const source = await patchedModule('sigs.k8s.io/kwok', VERSIONS.kwok, KWOK_PATCHES);
        await goCompile({
          packages: ['./cmd/kwok', './cmd/kwokctl'],
          out: `${dir}/`,
          ldflags: `-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${VERSIONS.kwok}`,
          cwd: source,
        });
      },
    },
    {
      name: `helm ${VERSIONS.helm}`,
      outputs: ['helm'],
      fingerprintFiles: [],
      run: (dir) =>
        goCompile({
          packages: [`helm.sh/helm/v3/cmd/helm@${VERSIONS.helm}`],
          gobin: dir,
          ldflags: `-s -w -X helm.sh/helm/v3/internal/version.version=${VERSIONS.helm}`,
        }),
    },
  ];
}

/**
 * A writable copy of `module@version` from the Go module cache (downloaded from the proxy if
 * needed), under the cache root, with `patches` applied. Its own go.mod and go.sum pin the
 * dependencies, so building inside it is the same build as `go install module@version`.
 */
export async function patchedModule(
  module: string,
  version: string,
  patches: readonly SourcePatch[],
): Promise<string> {
  const source = await moduleDir(module, version);
  const target = patchedSourceDir(module, version);
  rmSync(target, { recursive: true, force: true });
  copyWritable(source, target);
  for (const patch of patches) {
    const file = join(target, patch.file);
    writeFileSync(file, applySourcePatch(readFileSync(file, 'utf8'), patch));
  }
  return target;
}

/** Where the patched copy of `module@version` is built. */
export function patchedSourceDir(module: string, version: string): string {
  return join(cacheRoot(), 'src', `${module.replaceAll('/', '_')}@${version}`);
}

/** Copies a tree; the module cache's files are read-only, the copy's are writable by its owner. */
function copyWritable(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) copyWritable(source, target);
    else if (entry.isFile()) {
      copyFileSync(source, target);
      chmodSync(target, statSync(source).mode | 0o200);
    }
  }
}

function fingerprint(step: BuildStep): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify(VERSIONS));
  hash.update(versionLdflags());
  for (const file of step.fingerprintFiles) hash.update(readFileSync(file));
  return hash.digest('hex');
}

function say(message: string): void {
  process.stderr.write(`[toolchain] ${message}\n`);
}

/** Runs `go`, printing a heartbeat with the number of packages compiled so a cold build visibly lives. */
export function go(args: string[], cwd: string | undefined, env: Record<string, string> = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let packages = 0;
    let lastLines: string[] = [];
    const child = spawn('go', args, {
      cwd: cwd ?? cacheRoot(),
      env: { ...process.env, GOTOOLCHAIN: 'local', ...env },
      stdio: ['ignore', 'inherit', 'pipe'],
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      const lines = chunk.split('\n').filter(Boolean);
      packages += lines.filter((l) => !l.startsWith('go: ')).length;
      lastLines = [...lastLines, ...lines].slice(-40);
    });
    const heartbeat = setInterval(() => {
      const secs = Math.round((Date.now() - started) / 1000);
      say(
        `  ... still building: ${packages} packages compiled, ${Math.floor(secs / 60)}m${secs % 60}s elapsed`,
      );
    }, 20_000);
    child.on('error', (err) => {
      clearInterval(heartbeat);
      reject(new Error(`cannot run go (is Go >= 1.26 installed and on PATH?): ${err.message}`));
    });
    child.on('exit', (code) => {
      clearInterval(heartbeat);
      if (code === 0) resolve();
      else reject(new Error(`go ${args[0]} failed (exit ${code}):\n${lastLines.join('\n')}`));
    });
  });
}

export interface GoCompile {
  /** Packages (`./cmd/x`, `k8s.io/...`) or `module@version` paths. */
  packages: readonly string[];
  /** `go build -o` target (a folder ending in `/`, or a file); without it, `go install` into `gobin`. */
  out?: string;
  gobin?: string;
  ldflags: string;
  tags?: readonly string[];
  /** More build flags, e.g. `-buildmode=pie`. */
  flags?: readonly string[];
  cwd?: string;
  env?: Record<string, string>;
}

/** `go build` or `go install` with -v (the heartbeat counts its lines) and -trimpath. */
export function goCompile(c: GoCompile): Promise<void> {
  const args = [
    c.out ? 'build' : 'install',
    '-v',
    '-trimpath',
    ...(c.flags ?? []),
    ...(c.tags?.length ? ['-tags', c.tags.join(' ')] : []),
    '-ldflags',
    c.ldflags,
    ...(c.out ? ['-o', c.out] : []),
    ...c.packages,
  ];
  return go(args, c.cwd, { ...(c.gobin ? { GOBIN: c.gobin } : {}), ...c.env });
}

/** The folder of `module@version` in the Go module cache, downloaded from the proxy if needed. */
export async function moduleDir(module: string, version: string): Promise<string> {
  // On failure too, `go mod download -json` prints the module's JSON, with the reason in Error.
  const download = await run('go', ['mod', 'download', '-json', `${module}@${version}`], {
    cwd: cacheRoot(),
    env: { GOTOOLCHAIN: 'local' },
  });
  const info = (download.stdout.trim() ? JSON.parse(download.stdout) : {}) as {
    Dir?: string;
    Error?: string;
  };
  if (!info.Dir) {
    throw new Error(`go mod download ${module}@${version} failed: ${info.Error ?? download.stderr}`);
  }
  return info.Dir;
}

/** The fingerprints of the binaries as built: they change whenever one is rebuilt. */
export function toolchainStamps(): string {
  const file = stampsPath();
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

function stampsPath(): string {
  return join(toolchainDir(), '.stamps.json');
}

/**
 * Builds whatever is missing or out of date; returns the binaries' paths. Safe to call every time,
 * from several processes at once: one builds while the others wait for it (two builds would share
 * the patched source copies and the stamps file).
 */
export function ensureToolchain(): Promise<Toolchain> {
  return withFileLock(join(cacheRoot(), 'toolchain.lock'), 90 * 60_000, buildMissing);
}

async function buildMissing(): Promise<Toolchain> {
  const dir = toolchainDir();
  mkdirSync(dir, { recursive: true });
  const stampFile = stampsPath();
  const stamps: Record<string, string> = existsSync(stampFile)
    ? JSON.parse(readFileSync(stampFile, 'utf8'))
    : {};
  const started = Date.now();
  let built = 0;
  for (const step of steps()) {
    const print = fingerprint(step);
    const present = step.outputs.every((out) => existsSync(join(dir, out)));
    if (present && stamps[step.name] === print) continue;
    const stepStart = Date.now();
    say(`building ${step.name} from the Go module proxy into ${dir} (a cold build takes minutes)`);
    await step.run(dir);
    stamps[step.name] = print;
    writeFileSync(stampFile, `${JSON.stringify(stamps, null, 2)}\n`);
    say(`built ${step.name} in ${((Date.now() - stepStart) / 1000).toFixed(0)}s`);
    built++;
  }
  if (built > 0) say(`toolchain ready in ${((Date.now() - started) / 1000).toFixed(0)}s`);
  return toolchainPaths(dir);
}
