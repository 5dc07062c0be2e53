import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, runOk } from '../../exec.ts';
import { cacheRoot, VERSIONS } from '../../local/toolchain.ts';
import { buildImage, type ContainerEngine, importFolder, pipe } from '../engine.ts';
import { ensureImage, FINGERPRINT_LABEL, type ImageRecipe } from '../image-cache.ts';
import { debootstrapRootfs } from '../images/debian.ts';
import type { NodeBinaries } from './binaries.ts';
import { defaultCniManifest } from './cni-manifest.ts';
import { type KindFacts, moduleDir, readKindFacts } from './sources.ts';

/** The kind node image this repository assembles when kind's own cannot be pulled. */
export const LOCAL_NODE_IMAGE = `basic-operator.local/kind-node:${VERSIONS.kubernetes}`;

/**
 * The packages kind's base image installs (images/base/Dockerfile), less nfs-common and
 * open-iscsi (network storage, unused here) and fuse-overlayfs (rootless engines only).
 */
const NODE_PACKAGES = [
  'systemd',
  'conntrack',
  'iptables',
  'nftables',
  'iproute2',
  'ethtool',
  'util-linux',
  'mount',
  'kmod',
  'libseccomp2',
  'pigz',
  'bash',
  'ca-certificates',
  'curl',
  'jq',
  'procps',
];

/**
 * What kind's base Dockerfile runs after installing the packages: no services but the node's own,
 * no kernel log in the journal, systemd as init, and kubelet, containerd and kind's mount fix-up
 * enabled.
 */
const BASE_SETUP = `set -e
find /lib/systemd/system/sysinit.target.wants/ -name "systemd-tmpfiles-setup.service" -delete
rm -f /lib/systemd/system/multi-user.target.wants/*
rm -f /etc/systemd/system/*.wants/*
rm -f /lib/systemd/system/local-fs.target.wants/*
rm -f /lib/systemd/system/sockets.target.wants/*udev*
rm -f /lib/systemd/system/sockets.target.wants/*initctl*
rm -f /lib/systemd/system/basic.target.wants/*
echo "ReadKMsg=no" >> /etc/systemd/journald.conf
ln -sf "$(command -v systemd || echo /lib/systemd/systemd)" /sbin/init
systemctl enable kubelet.service containerd.service undo-mount-hacks.service
systemctl mask systemd-binfmt.service
mkdir -p /etc/kubernetes/manifests /opt/cni/bin /etc/cni/net.d
`;

export interface NodeImageInputs {
  binaries: NodeBinaries;
  /** Every image the node must hold before it boots (kubeadm's, the CNI's, the storage's). */
  preload: readonly string[];
  /** Fingerprints of those images, so a rebuilt one rebuilds the node image. */
  preloadFingerprints: readonly string[];
  /** The image the default CNI DaemonSet runs (one with a shell). */
  cniImage: string;
}

function say(message: string): void {
  process.stderr.write(`[node-image] ${message}\n`);
}

const HERE = dirname(fileURLToPath(import.meta.url));

/**
 * The node image, as kind's `build node-image` makes it but without a registry: kind's base
 * (bookworm from debootstrap, kind's files from its module, containerd, runc, CNI plugins), the
 * Kubernetes node binaries in /usr/bin, kind's manifests in /kind/manifests, and every image
 * preloaded into containerd's k8s.io namespace (imported in a build container, then committed).
 */
export async function ensureNodeImage(engine: ContainerEngine, inputs: NodeImageInputs): Promise<string> {
  const kindDir = await moduleDir('sigs.k8s.io/kind', VERSIONS.kind);
  const kind = readKindFacts(kindDir);
  const binaries = Object.values(inputs.binaries).filter((path) => statSync(path).isFile());
  // kind's sources are part of what the image is made from.
  const kindInputs = [kind.storageManifest, kind.sandboxImage, VERSIONS.kind];
  const recipe: ImageRecipe = {
    ref: LOCAL_NODE_IMAGE,
    inputs: [
      JSON.stringify(VERSIONS),
      ...NODE_PACKAGES,
      BASE_SETUP,
      readFileSync(join(HERE, 'node-image.ts')),
      readFileSync(join(HERE, 'cni-manifest.ts')),
      readFileSync(join(HERE, 'restrict-oom-score-adj.sh')),
      ...binaries.map((path) => `${path}:${statSync(path).size}:${statSync(path).mtimeMs}`),
      ...cniPluginFiles(inputs.binaries.cniDir).map((p) => `${p}:${statSync(p).mtimeMs}`),
      ...kindInputs,
      ...inputs.preload,
      ...inputs.preloadFingerprints,
      inputs.cniImage,
    ],
    build: (fingerprint) => buildNodeImage(engine, kindDir, kind, inputs, fingerprint),
  };
  await ensureImage(engine, recipe);
  return LOCAL_NODE_IMAGE;
}

function cniPluginFiles(dir: string): string[] {
  return readdirSync(dir)
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile());
}

async function buildNodeImage(
  engine: ContainerEngine,
  kindDir: string,
  kind: KindFacts,
  inputs: NodeImageInputs,
  fingerprint: string,
): Promise<void> {
  const rootfs = await debootstrapRootfs('kind-node', NODE_PACKAGES);
  const staging = join(cacheRoot(), 'kind', 'node-staging');
  rmSync(staging, { recursive: true, force: true });
  say('assembling the node root file system');
  await runOk('cp', ['-a', `${rootfs}/.`, staging]);
  rmSync(join(staging, '.complete'), { force: true });
  addKindBaseFiles(kindDir, staging);
  addBinaries(inputs.binaries, staging);
  addOomScoreFixup(staging);
  await runOk('chroot', [staging, 'sh', '-c', BASE_SETUP]);
  // kind's base image: `ctr oci spec`, with kind's mount hook and without rlimits.
  const spec = JSON.parse(await runOk(inputs.binaries.ctr, ['oci', 'spec'])) as {
    hooks?: { createContainer?: Array<{ path: string }> };
    process?: { rlimits?: unknown };
  };
  spec.hooks ??= {};
  spec.hooks.createContainer = [
    ...(spec.hooks.createContainer ?? []),
    { path: '/kind/bin/mount-product-files.sh' },
  ];
  delete spec.process?.rlimits;
  writeFileSync(join(staging, 'etc', 'containerd', 'cri-base.json'), `${JSON.stringify(spec, null, 2)}\n`);
  writeFileSync(join(staging, 'kind', 'version'), VERSIONS.kubernetes);
  mkdirSync(join(staging, 'kind', 'manifests'), { recursive: true });
  writeFileSync(join(staging, 'kind', 'manifests', 'default-cni.yaml'), defaultCniManifest(inputs.cniImage));
  writeFileSync(join(staging, 'kind', 'manifests', 'default-storage.yaml'), kind.storageManifest);

  const base = `${LOCAL_NODE_IMAGE}-base`;
  await importFolder(engine, staging, base, [
    'ENV container=docker',
    'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]',
  ]);
  rmSync(staging, { recursive: true, force: true });
  await preloadAndCommit(engine, base, inputs.preload, fingerprint);
  await run(engine.bin, ['image', 'rm', base]);
}

/** restrict-oom-score-adj.sh, run before containerd starts (see the script). */
function addOomScoreFixup(root: string): void {
  const script = join(root, 'usr', 'local', 'bin', 'restrict-oom-score-adj');
  copyFileSync(join(HERE, 'restrict-oom-score-adj.sh'), script);
  chmodSync(script, 0o755);
  const dropIn = join(root, 'etc', 'systemd', 'system', 'containerd.service.d');
  mkdirSync(dropIn, { recursive: true });
  writeFileSync(
    join(dropIn, '20-restrict-oom-score-adj.conf'),
    '[Service]\nExecStartPre=/usr/local/bin/restrict-oom-score-adj\n',
  );
}

/** kind's images/base/files, with the modes its Dockerfile gives them. */
function addKindBaseFiles(kindDir: string, root: string): void {
  const files = join(kindDir, 'images', 'base', 'files');
  copyTree(files, root, (relative) =>
    relative.startsWith('usr/local/bin/') || relative.startsWith('kind/bin/') ? 0o755 : 0o644,
  );
}

function copyTree(from: string, to: string, mode: (relative: string) => number, prefix = ''): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const relative = `${prefix}${entry.name}`;
    if (entry.isDirectory()) {
      copyTree(join(from, entry.name), join(to, entry.name), mode, `${relative}/`);
      chmodSync(join(to, entry.name), 0o755);
    } else if (entry.isFile()) {
      const target = join(to, entry.name);
      rmSync(target, { force: true });
      copyFileSync(join(from, entry.name), target);
      chmodSync(target, mode(relative));
    }
  }
}

function addBinaries(binaries: NodeBinaries, root: string): void {
  const place = (source: string, target: string) => {
    mkdirSync(dirname(join(root, target)), { recursive: true });
    copyFileSync(source, join(root, target));
    chmodSync(join(root, target), 0o755);
  };
  // kind's kubelet unit expects /usr/bin/kubelet; its base puts containerd in /usr/local/bin.
  place(binaries.kubelet, 'usr/bin/kubelet');
  place(binaries.kubeadm, 'usr/bin/kubeadm');
  place(binaries.kubectl, 'usr/bin/kubectl');
  place(binaries.containerd, 'usr/local/bin/containerd');
  place(binaries.ctr, 'usr/local/bin/ctr');
  place(binaries.containerdShimRuncV2, 'usr/local/bin/containerd-shim-runc-v2');
  place(binaries.runc, 'usr/local/sbin/runc');
  for (const plugin of cniPluginFiles(binaries.cniDir)) {
    place(plugin, join('opt', 'cni', 'bin', plugin.slice(binaries.cniDir.length + 1)));
  }
}

/**
 * kind's image build: containerd started in a privileged build container, every image imported
 * into its k8s.io namespace (content only, pinned, as kind does), containerd stopped, and the
 * container committed with the node's entrypoint and the fingerprint label.
 */
async function preloadAndCommit(
  engine: ContainerEngine,
  base: string,
  images: readonly string[],
  fingerprint: string,
): Promise<void> {
  const id = (
    await runOk(engine.bin, [
      'run',
      '-d',
      '--privileged',
      '--security-opt',
      'seccomp=unconfined',
      '--entrypoint=sleep',
      base,
      'infinity',
    ])
  ).trim();
  try {
    await runOk(engine.bin, [
      'exec',
      id,
      'bash',
      '-c',
      'nohup containerd > /var/log/containerd-build.log 2>&1 &',
    ]);
    await runOk(engine.bin, [
      'exec',
      id,
      'bash',
      '-c',
      'for i in $(seq 1 60); do ctr version >/dev/null 2>&1 && exit 0; sleep 0.5; done; cat /var/log/containerd-build.log; exit 1',
    ]);
    for (const image of images) {
      say(`preloading ${image}`);
      await pipe(engine.bin, ['save', image], engine.bin, [
        'exec',
        '-i',
        id,
        'ctr',
        '--namespace=k8s.io',
        'images',
        'import',
        '--label=io.cri-containerd.pinned=pinned',
        '--all-platforms',
        '--no-unpack',
        '--digests',
        '-',
      ]);
    }
    const listed = await runOk(engine.bin, ['exec', id, 'ctr', '--namespace=k8s.io', 'images', 'list', '-q']);
    const missing = images.filter((image) => !listed.split('\n').includes(normalized(image)));
    if (missing.length > 0) {
      throw new Error(
        `containerd in the node does not list ${missing.join(', ')} after the import:\n${listed}`,
      );
    }
    await runOk(engine.bin, ['exec', id, 'pkill', 'containerd']);
    await runOk(engine.bin, [
      'exec',
      id,
      'bash',
      '-c',
      // `sleep` as PID 1 reaps nothing: a stopped containerd stays a zombie.
      'for i in $(seq 1 40); do alive=; for p in $(pgrep -x containerd); do grep -q "^State:.*Z" /proc/$p/status || alive=1; done; [ -z "$alive" ] && exit 0; sleep 0.25; done; exit 1',
    ]);
    await runOk(engine.bin, ['exec', id, 'rm', '-f', '/var/log/containerd-build.log']);
    say('committing the node image');
    const committed = `${LOCAL_NODE_IMAGE}-committed`;
    await runOk(engine.bin, ['commit', id, committed]);
    // `commit --change` takes no STOPSIGNAL: a one-line build on top sets it, the entrypoint and the label.
    const context = join(cacheRoot(), 'kind', 'node-commit');
    rmSync(context, { recursive: true, force: true });
    mkdirSync(context, { recursive: true });
    writeFileSync(
      join(context, 'Dockerfile'),
      [
        `FROM ${committed}`,
        // systemd exits on SIGRTMIN+3, not SIGTERM (which re-executes it), as kind's base sets.
        'STOPSIGNAL SIGRTMIN+3',
        'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]',
        `LABEL ${FINGERPRINT_LABEL}=${fingerprint}`,
        '',
      ].join('\n'),
    );
    await buildImage(engine, { context, tag: LOCAL_NODE_IMAGE });
    rmSync(context, { recursive: true, force: true });
    await run(engine.bin, ['image', 'rm', committed]);
  } finally {
    await run(engine.bin, ['rm', '-f', '-v', id]);
  }
}

/** containerd's name for an image reference (`busybox:1` is `docker.io/library/busybox:1`). */
export function normalized(ref: string): string {
  const slash = ref.indexOf('/');
  const first = slash < 0 ? '' : ref.slice(0, slash);
  const hasRegistry = first.includes('.') || first.includes(':') || first === 'localhost';
  const named = hasRegistry ? ref : `docker.io/${slash < 0 ? `library/${ref}` : ref}`;
  return /:[^/]+$/.test(named) || named.includes('@') ? named : `${named}:latest`;
}
