import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runOk } from '../../exec.ts';
import { withFileLock } from '../../local/lock.ts';
import {
  cacheRoot,
  ensureToolchain,
  goCompile,
  patchedModule,
  VERSIONS,
  versionLdflags,
} from '../../local/toolchain.ts';
import { type KindFacts, moduleDir, readKindFacts } from './sources.ts';
import { CNI_PLUGINS, CONTAINERD_BUILDTAGS, KIND_NODE_VERSIONS } from './versions.ts';

/**
 * The binaries a kind node runs, built from the Go module proxy as kind's base image builds them
 * (images/base/Dockerfile), cached under the cache folder and rebuilt only when what they are built
 * from changes. kubectl is the local toolchain's.
 */
export interface NodeBinaries {
  dir: string;
  kubelet: string;
  kubeadm: string;
  kubectl: string;
  containerd: string;
  ctr: string;
  containerdShimRuncV2: string;
  /** Built with cgo and the seccomp tag: links libseccomp.so.2 (Debian's libseccomp2). */
  runc: string;
  /** host-local, loopback, ptp, portmap and bridge. */
  cniDir: string;
}

/** One build producing `outputs` (relative to the binaries folder). */
export interface BinaryStep {
  name: string;
  outputs: string[];
  /** Everything the build depends on besides the files: versions, flags, tags. */
  inputs: unknown;
  /** Files whose contents the build depends on. */
  files?: string[];
  run(dir: string): Promise<void>;
}

const HERE = dirname(fileURLToPath(import.meta.url));
/** The local toolchain's wrapper module, which also resolves kubelet, kubeadm and kube-proxy. */
export const KUBERNETES_WRAPPER = join(HERE, '..', '..', 'local', 'toolchain', 'kubernetes');

export function nodeBinDir(): string {
  return join(cacheRoot(), 'kind', 'node', 'bin');
}

function say(message: string): void {
  process.stderr.write(`[kind-node] ${message}\n`);
}

let goVersionMemo: Promise<string> | undefined;
function goVersion(): Promise<string> {
  goVersionMemo ??= runOk('go', ['env', 'GOVERSION'], { env: { GOTOOLCHAIN: 'local' } }).then((v) =>
    v.trim(),
  );
  return goVersionMemo;
}

let kindFactsMemo: Promise<KindFacts> | undefined;
/** What kind's sources (sigs.k8s.io/kind at VERSIONS.kind, from the proxy) name and build. */
export function kindFacts(): Promise<KindFacts> {
  kindFactsMemo ??= moduleDir('sigs.k8s.io/kind', VERSIONS.kind).then(readKindFacts);
  return kindFactsMemo;
}

async function stepFingerprint(step: BinaryStep): Promise<string> {
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ go: await goVersion(), inputs: step.inputs }));
  for (const file of step.files ?? []) hash.update(readFileSync(file));
  return hash.digest('hex');
}

/**
 * Runs the steps whose outputs are missing or were built from other inputs, one process at a time
 * (a lock on the cache folder), into nodeBinDir(). Returns that folder.
 */
export function ensureBinarySteps(steps: readonly BinaryStep[]): Promise<string> {
  return withFileLock(join(cacheRoot(), 'kind-node-bin.lock'), 120 * 60_000, async () => {
    const dir = nodeBinDir();
    mkdirSync(dir, { recursive: true });
    const stampFile = join(dir, '.stamps.json');
    const stamps: Record<string, string> = existsSync(stampFile)
      ? JSON.parse(readFileSync(stampFile, 'utf8'))
      : {};
    for (const step of steps) {
      const print = await stepFingerprint(step);
      const present = step.outputs.every((out) => existsSync(join(dir, out)));
      if (present && stamps[step.name] === print) continue;
      const started = Date.now();
      say(`building ${step.name} into ${dir}`);
      await step.run(dir);
      const missing = step.outputs.filter((out) => !existsSync(join(dir, out)));
      if (missing.length > 0) throw new Error(`building ${step.name} did not produce ${missing.join(', ')}`);
      stamps[step.name] = print;
      writeFileSync(stampFile, `${JSON.stringify(stamps, null, 2)}\n`);
      say(`built ${step.name} in ${((Date.now() - started) / 1000).toFixed(0)}s`);
    }
    return dir;
  });
}

/** `go build` in the Kubernetes wrapper module with the toolchain's version stamps. */
export function kubernetesStep(name: string, packages: Record<string, string>): BinaryStep {
  return {
    name: `${name} ${VERSIONS.kubernetes}`,
    outputs: Object.keys(packages),
    inputs: { packages, ldflags: versionLdflags() },
    files: [join(KUBERNETES_WRAPPER, 'go.mod'), join(KUBERNETES_WRAPPER, 'go.sum')],
    run: (dir) =>
      goCompile({
        packages: Object.values(packages),
        out: `${dir}/`,
        ldflags: versionLdflags(),
        cwd: KUBERNETES_WRAPPER,
      }),
  };
}

function nodeSteps(): BinaryStep[] {
  const { containerd, runc, cniPlugins } = KIND_NODE_VERSIONS;
  const containerdModule = 'github.com/containerd/containerd/v2';
  // containerd's Makefile: version stamps, BUILDTAGS + urfave_cli_no_docs, PIE for ctr and containerd,
  // a static shim without cgo (SHIM_CGO_ENABLED=0) and with no_grpc.
  const containerdLdflags = [
    `-X ${containerdModule}/version.Version=${containerd}`,
    `-X ${containerdModule}/version.Package=${containerdModule}`,
  ].join(' ');
  const containerdTags = [...CONTAINERD_BUILDTAGS, 'urfave_cli_no_docs'];
  // runc's Makefile (`make runc`): cgo, tags seccomp and urfave_cli_no_docs, PIE, version stamp.
  const runcTags = ['seccomp', 'urfave_cli_no_docs'];
  const runcLdflags = `-X main.version=${runc.replace(/^v/, '')}`;
  const cniLdflags = `-X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=${cniPlugins}`;
  return [
    kubernetesStep('kubelet, kubeadm', {
      kubelet: 'k8s.io/kubernetes/cmd/kubelet',
      kubeadm: 'k8s.io/kubernetes/cmd/kubeadm',
    }),
    {
      // containerd's go.mod has exclude directives, so `go install module@version` refuses it:
      // it is built inside a copy of the module (which pins the same dependencies).
      name: `containerd, ctr, containerd-shim-runc-v2 ${containerd}`,
      outputs: ['containerd', 'ctr', 'containerd-shim-runc-v2'],
      inputs: { containerd, containerdLdflags, containerdTags },
      run: async (dir) => {
        const source = await patchedModule(containerdModule, containerd, []);
        await goCompile({
          packages: ['./cmd/containerd', './cmd/ctr'],
          out: `${dir}/`,
          ldflags: containerdLdflags,
          tags: containerdTags,
          flags: ['-buildmode=pie'],
          cwd: source,
          env: { CGO_ENABLED: '1' },
        });
        await goCompile({
          packages: ['./cmd/containerd-shim-runc-v2'],
          out: join(dir, 'containerd-shim-runc-v2'),
          ldflags: `${containerdLdflags} -extldflags "-static"`,
          tags: [...containerdTags, 'no_grpc'],
          cwd: source,
          env: { CGO_ENABLED: '0' },
        });
      },
    },
    {
      name: `runc ${runc}`,
      outputs: ['runc'],
      inputs: { runc, runcTags, runcLdflags },
      run: (dir) =>
        goCompile({
          packages: [`github.com/opencontainers/runc@${runc}`],
          gobin: dir,
          ldflags: runcLdflags,
          tags: runcTags,
          flags: ['-buildmode=pie'],
          env: { CGO_ENABLED: '1' },
        }),
    },
    {
      // As kind builds them: static (no cgo); the version stamp as the plugins' own release script sets it.
      name: `CNI plugins ${Object.keys(CNI_PLUGINS).join(', ')} ${cniPlugins}`,
      outputs: Object.keys(CNI_PLUGINS).map((plugin) => join('cni', plugin)),
      inputs: { cniPlugins, CNI_PLUGINS, cniLdflags },
      run: (dir) =>
        goCompile({
          packages: Object.values(CNI_PLUGINS).map(
            (path) => `github.com/containernetworking/plugins/${path}@${cniPlugins}`,
          ),
          gobin: join(dir, 'cni'),
          ldflags: cniLdflags,
          env: { CGO_ENABLED: '0' },
        }),
    },
  ];
}

/** Says so when kind's base image builds other versions or tags than KIND_NODE_VERSIONS pins. */
function compareWithKind(facts: KindFacts): void {
  const pinned: Record<string, string> = {
    CONTAINERD_VERSION: KIND_NODE_VERSIONS.containerd,
    RUNC_VERSION: KIND_NODE_VERSIONS.runc,
    CNI_PLUGINS_VERSION: KIND_NODE_VERSIONS.cniPlugins,
    BUILDTAGS: CONTAINERD_BUILDTAGS.join(' '),
  };
  for (const [arg, value] of Object.entries(pinned)) {
    const kinds = facts.baseArgs[arg];
    if (kinds !== undefined && kinds !== value) {
      say(`note: kind ${VERSIONS.kind} builds ${arg}=${kinds}; KIND_NODE_VERSIONS pins ${value}`);
    }
  }
}

/**
 * kubelet, kubeadm, kubectl, containerd (+ ctr, shim), runc and the CNI plugins for the node image,
 * built if missing or out of date (a cold build takes several minutes on two cores). Safe to call
 * every time and from several processes.
 */
export async function ensureNodeBinaries(): Promise<NodeBinaries> {
  const toolchain = await ensureToolchain();
  compareWithKind(await kindFacts());
  const dir = await ensureBinarySteps(nodeSteps());
  return {
    dir,
    kubelet: join(dir, 'kubelet'),
    kubeadm: join(dir, 'kubeadm'),
    kubectl: toolchain.kubectl,
    containerd: join(dir, 'containerd'),
    ctr: join(dir, 'ctr'),
    containerdShimRuncV2: join(dir, 'containerd-shim-runc-v2'),
    runc: join(dir, 'runc'),
    cniDir: join(dir, 'cni'),
  };
}
