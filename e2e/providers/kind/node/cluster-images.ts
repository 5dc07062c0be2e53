import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  createReadStream,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, runOk } from '../../exec.ts';
import { cacheRoot, ensureToolchain, goCompile, VERSIONS } from '../../local/toolchain.ts';
import { type ContainerEngine, importFolder } from '../engine.ts';
import { ensureImage, FINGERPRINT_LABEL } from '../image-cache.ts';
import { DEBIAN_SUITE, debootstrapRootfs, unpackedPackages } from '../images/debian.ts';
import {
  type BinaryStep,
  ensureBinarySteps,
  ensureNodeBinaries,
  kindFacts,
  kubernetesStep,
} from './binaries.ts';
import { imageName, imageTag, kubeadmImages, makeVariable, moduleDir } from './sources.ts';
import { KIND_NODE_VERSIONS } from './versions.ts';

/**
 * The images a kind node preloads, built locally under the names kubeadm and kind's manifests run
 * them by: the control plane and kube-proxy, etcd, CoreDNS and pause (as `kubeadm config images
 * list` names them), kind's sandbox image (its containerd config), and kind's storage provisioner
 * and helper (its const_storage.go). Binaries come from the Go module proxy (the local toolchain's
 * for the control plane and etcd) and system files from Debian packages.
 */

const HERE = dirname(fileURLToPath(import.meta.url));
/** This file: how the images are laid out is an input of every image. */
const RECIPE = readFileSync(fileURLToPath(import.meta.url), 'utf8');
const IPTABLES_WRAPPER = join(HERE, 'iptables-wrapper.sh');
const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** A minimal glibc system, as distroless/base is: libc, CA certificates, /etc/services. */
const GLIBC_BASE_PACKAGES = ['libc6', 'libgcc-s1', 'ca-certificates', 'netbase'];
/**
 * Debian's busybox-static for the storage helper's sh, mkdir and rm, with libc6: it is linked
 * statically against glibc, which still loads the NSS modules at run time for user and host lookups.
 */
const HELPER_PACKAGES = [...GLIBC_BASE_PACKAGES, 'busybox-static'];
/** kube-proxy's tools (Kubernetes' distroless-iptables has the same): both iptables back ends, nft, conntrack, ipset. */
const KUBE_PROXY_PACKAGES = ['iptables', 'nftables', 'conntrack', 'ipset', 'kmod'];

/** The users distroless images have; CoreDNS runs as nonroot. */
const IDENTITY_FILES: Record<string, string> = {
  'etc/passwd': [
    'root:x:0:0:root:/root:/sbin/nologin',
    'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin',
    'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin',
    '',
  ].join('\n'),
  'etc/group': ['root:x:0:', 'nobody:x:65534:', 'nonroot:x:65532:', ''].join('\n'),
  'etc/nsswitch.conf': ['passwd: files', 'group: files', 'shadow: files', 'hosts: files dns', ''].join('\n'),
};

function say(message: string): void {
  process.stderr.write(`[kind-images] ${message}\n`);
}

// ---------------------------------------------------------------------------------------------
// Binaries only the images need

interface ImageBinaries {
  dir: string;
  kubeProxy: string;
  goRunner: string;
  coredns: string;
  localPathProvisioner: string;
  pause: string;
}

async function ensureImageBinaries(images: Record<string, string>): Promise<ImageBinaries> {
  const coredns = imageTag(required(images, 'coredns'));
  const provisioner = KIND_NODE_VERSIONS.localPathProvisioner;
  const kindProvisioner = (await kindFacts()).localPathProvisionerVersion;
  if (kindProvisioner !== provisioner) {
    say(
      `note: kind ${VERSIONS.kind} builds local-path-provisioner ${kindProvisioner}; this builds ${provisioner}`,
    );
  }
  const kubernetesDir = await moduleDir('k8s.io/kubernetes', VERSIONS.kubernetes);
  const pauseSource = join(kubernetesDir, 'build', 'pause', 'linux', 'pause.c');
  const pauseTag = makeVariable(
    readFileSync(join(kubernetesDir, 'build', 'pause', 'Makefile'), 'utf8'),
    'TAG',
  );
  const kubeadmPause = imageTag(required(images, 'pause'));
  if (pauseTag !== kubeadmPause) {
    say(
      `note: build/pause/Makefile of Kubernetes ${VERSIONS.kubernetes} says ${pauseTag}, kubeadm names ${kubeadmPause}`,
    );
  }
  // Kubernetes' build/pause/Makefile: CFLAGS = -Os -Wall -Werror -static -DVERSION=v$(TAG)-$(REV).
  const pauseFlags = ['-Os', '-Wall', '-Werror', '-static', `-DVERSION=v${pauseTag}-${VERSIONS.kubernetes}`];
  const corednsLdflags = '-s -w';
  const provisionerLdflags = `-X main.VERSION=${provisioner} -extldflags -static -s -w`;
  const steps: BinaryStep[] = [
    // kube-log-runner is what Kubernetes' images start as /go-runner (build/server-image/Dockerfile).
    kubernetesStep('kube-proxy, kube-log-runner', {
      'kube-proxy': 'k8s.io/kubernetes/cmd/kube-proxy',
      'kube-log-runner': 'k8s.io/component-base/logs/kube-log-runner',
    }),
    {
      // CoreDNS's Makefile: no cgo, tag grpcnotrace, stripped.
      name: `coredns ${coredns}`,
      outputs: ['coredns'],
      inputs: { coredns, corednsLdflags, tags: 'grpcnotrace' },
      run: (dir) =>
        goCompile({
          packages: [`github.com/coredns/coredns@${coredns}`],
          gobin: dir,
          ldflags: corednsLdflags,
          tags: ['grpcnotrace'],
          env: { CGO_ENABLED: '0' },
        }),
    },
    {
      // local-path-provisioner's scripts/build: no cgo, static, stripped, version stamp.
      name: `local-path-provisioner ${provisioner}`,
      outputs: ['local-path-provisioner'],
      inputs: { provisioner, provisionerLdflags },
      run: (dir) =>
        goCompile({
          packages: [`github.com/rancher/local-path-provisioner@${provisioner}`],
          gobin: dir,
          ldflags: provisionerLdflags,
          env: { CGO_ENABLED: '0' },
        }),
    },
    {
      name: `pause ${pauseTag} (build/pause/linux/pause.c of Kubernetes ${VERSIONS.kubernetes})`,
      outputs: ['pause'],
      inputs: { pauseFlags },
      files: [pauseSource],
      run: (dir) =>
        runOk('gcc', [...pauseFlags, '-o', join(dir, 'pause'), pauseSource]).then(() => undefined),
    },
  ];
  const dir = await ensureBinarySteps(steps);
  return {
    dir,
    kubeProxy: join(dir, 'kube-proxy'),
    goRunner: join(dir, 'kube-log-runner'),
    coredns: join(dir, 'coredns'),
    localPathProvisioner: join(dir, 'local-path-provisioner'),
    pause: join(dir, 'pause'),
  };
}

function required(images: Record<string, string>, name: string): string {
  const ref = images[name];
  if (!ref) throw new Error(`kubeadm names no ${name} image (it names ${Object.values(images).join(', ')})`);
  return ref;
}

// ---------------------------------------------------------------------------------------------
// File system staging

/** sha256 of a file, remembered by path, size and mtime (binaries are hundreds of MB). */
async function fileDigest(path: string): Promise<string> {
  const memoFile = join(cacheRoot(), 'kind', 'node', 'digests.json');
  const memo: Record<string, { size: number; mtimeMs: number; sha256: string }> = existsSync(memoFile)
    ? JSON.parse(readFileSync(memoFile, 'utf8'))
    : {};
  const stat = statSync(path);
  const known = memo[path];
  if (known && known.size === stat.size && known.mtimeMs === stat.mtimeMs) return known.sha256;
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  const sha256 = hash.digest('hex');
  // Re-read: another image may have been hashed meanwhile.
  const latest = existsSync(memoFile) ? JSON.parse(readFileSync(memoFile, 'utf8')) : {};
  mkdirSync(dirname(memoFile), { recursive: true });
  writeFileSync(
    memoFile,
    JSON.stringify({ ...latest, [path]: { size: stat.size, mtimeMs: stat.mtimeMs, sha256 } }),
  );
  return sha256;
}

/**
 * A fresh staging folder for an image holding a hard-linked copy of `roots` (cached root file
 * systems, never written through: files put in a stage replace the link instead).
 */
async function stage(name: string, roots: readonly string[]): Promise<string> {
  const dir = join(cacheRoot(), 'kind', 'stage', name);
  const fresh = () => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
  };
  fresh();
  let linked = true;
  for (const root of roots) linked &&= (await run('cp', ['-al', `${root}/.`, dir])).code === 0;
  if (!linked) {
    // Another file system: copies (never over a half-linked tree, which would write through).
    fresh();
    for (const root of roots) await runOk('cp', ['-a', `${root}/.`, dir]);
  }
  rmSync(join(dir, '.complete'), { force: true });
  return dir;
}

/** Writes a file into a stage (replacing, never writing through, a hard link). */
function put(root: string, path: string, content: string | Buffer, mode = 0o644): void {
  const target = join(root, path);
  mkdirSync(dirname(target), { recursive: true });
  rmSync(target, { force: true });
  writeFileSync(target, content);
  chmodSync(target, mode);
}

/** Puts a binary into a stage (a hard link when on the same file system). */
function putBinary(root: string, path: string, binary: string): void {
  const target = join(root, path);
  mkdirSync(dirname(target), { recursive: true });
  rmSync(target, { force: true });
  try {
    linkSync(binary, target);
  } catch {
    copyFileSync(binary, target);
    chmodSync(target, 0o755);
  }
}

/** /etc/ssl/certs/ca-certificates.crt as update-ca-certificates makes it from the package's certificates. */
function caBundle(root: string): void {
  const dir = join(root, 'usr', 'share', 'ca-certificates', 'mozilla');
  const certs = readdirSync(dir)
    .filter((f) => f.endsWith('.crt'))
    .sort()
    .map((f) => {
      const pem = readFileSync(join(dir, f), 'utf8');
      return pem.endsWith('\n') ? pem : `${pem}\n`;
    });
  put(root, 'etc/ssl/certs/ca-certificates.crt', certs.join(''));
}

/** The distroless-like layout: users, NSS, CA bundle, a sticky /tmp. */
function systemFiles(root: string): void {
  for (const [path, content] of Object.entries(IDENTITY_FILES)) put(root, path, content);
  caBundle(root);
  mkdirSync(join(root, 'tmp'), { recursive: true });
  chmodSync(join(root, 'tmp'), 0o1777);
  mkdirSync(join(root, 'home', 'nonroot'), { recursive: true });
}

/** Docs, manuals and translations are not part of an image. */
function slim(root: string): void {
  for (const path of ['usr/share/doc', 'usr/share/man', 'usr/share/info', 'usr/share/locale']) {
    rmSync(join(root, path), { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Images

interface ImageSpec {
  ref: string;
  /** What it is built from besides the staged binaries (package lists, files, configuration). */
  inputs: string[];
  /** Binaries whose contents the image depends on. */
  binaries: string[];
  /** Stages the image's root file system; returns the folder. */
  stage(): Promise<string>;
  /** docker import --change instructions (besides the fingerprint label). */
  changes: string[];
}

async function buildSpec(engine: ContainerEngine, spec: ImageSpec): Promise<void> {
  const digests: string[] = [];
  for (const binary of spec.binaries) digests.push(await fileDigest(binary));
  await ensureImage(engine, {
    ref: spec.ref,
    inputs: [RECIPE, ...spec.inputs, ...spec.changes, ...digests],
    build: async (fingerprint) => {
      const dir = await spec.stage();
      await importFolder(engine, dir, spec.ref, [
        ...spec.changes,
        `LABEL ${FINGERPRINT_LABEL}=${fingerprint}`,
      ]);
      rmSync(dir, { recursive: true, force: true });
    },
  });
}

/**
 * Builds (or loads from the cache) every image the kind node must preload, under the names
 * kubeadm and kind's manifests use; returns their references. A cold build takes many minutes (it
 * builds kube-proxy, CoreDNS and the provisioner from the proxy); a warm one, seconds.
 */
export async function ensureClusterImages(engine: ContainerEngine): Promise<string[]> {
  const started = Date.now();
  const toolchain = await ensureToolchain();
  const node = await ensureNodeBinaries();
  const kind = await kindFacts();
  const images = kubeadmImages(
    await runOk(node.kubeadm, [
      'config',
      'images',
      'list',
      '--kubernetes-version',
      VERSIONS.kubernetes,
      '-o',
      'json',
    ]),
  );
  const bins = await ensureImageBinaries(images);
  const glibc = () => unpackedPackages('glibc-base', GLIBC_BASE_PACKAGES);
  const glibcInputs = [DEBIAN_SUITE, ...GLIBC_BASE_PACKAGES, ...Object.values(IDENTITY_FILES)];

  /** A control-plane image as Kubernetes' build/server-image makes it: /go-runner + the binary. */
  const kubeImage = (name: string, binary: string): ImageSpec => ({
    ref: required(images, name),
    inputs: glibcInputs,
    binaries: [binary, bins.goRunner],
    stage: async () => {
      const dir = await stage(name, [await glibc()]);
      systemFiles(dir);
      slim(dir);
      putBinary(dir, `usr/local/bin/${name}`, binary);
      putBinary(dir, 'go-runner', bins.goRunner);
      return dir;
    },
    changes: [`ENV ${PATH_ENV}`, 'ENTRYPOINT ["/go-runner"]'],
  });

  const pauseImage = (ref: string): ImageSpec => ({
    ref,
    inputs: [],
    binaries: [bins.pause],
    stage: async () => {
      const dir = await stage(imageName(ref), []);
      putBinary(dir, 'pause', bins.pause);
      return dir;
    },
    // build/pause/Dockerfile
    changes: ['USER 65535:65535', 'ENTRYPOINT ["/pause"]'],
  });

  const wrapper = readFileSync(IPTABLES_WRAPPER);
  const specs: ImageSpec[] = [
    kubeImage('kube-apiserver', toolchain.kubeApiserver),
    kubeImage('kube-controller-manager', toolchain.kubeControllerManager),
    kubeImage('kube-scheduler', toolchain.kubeScheduler),
    {
      // On Debian with both iptables back ends, as Kubernetes' distroless-iptables base, and the
      // same switch between them at run time (iptables-wrapper.sh).
      ...kubeImage('kube-proxy', bins.kubeProxy),
      inputs: [DEBIAN_SUITE, ...KUBE_PROXY_PACKAGES, wrapper.toString('utf8')],
      stage: async () => {
        const dir = await stage('kube-proxy', [await debootstrapRootfs('kube-proxy', KUBE_PROXY_PACKAGES)]);
        slim(dir);
        put(dir, 'usr/sbin/iptables-wrapper', wrapper, 0o755);
        for (const command of [
          'iptables',
          'iptables-save',
          'iptables-restore',
          'ip6tables',
          'ip6tables-save',
          'ip6tables-restore',
        ]) {
          rmSync(join(dir, 'usr', 'sbin', command), { force: true });
          symlinkSync('iptables-wrapper', join(dir, 'usr', 'sbin', command));
        }
        putBinary(dir, 'usr/local/bin/kube-proxy', bins.kubeProxy);
        putBinary(dir, 'go-runner', bins.goRunner);
        return dir;
      },
    },
    {
      // Named as kubeadm expects (etcd 3.6.8-0) but the toolchain's etcd VERSIONS.etcd (v3.6.16),
      // the same minor release with later fixes: what the local clusters already run.
      ref: required(images, 'etcd'),
      inputs: glibcInputs,
      binaries: [toolchain.etcd, toolchain.etcdctl],
      stage: async () => {
        const dir = await stage('etcd', [await glibc()]);
        systemFiles(dir);
        slim(dir);
        putBinary(dir, 'usr/local/bin/etcd', toolchain.etcd);
        putBinary(dir, 'usr/local/bin/etcdctl', toolchain.etcdctl);
        return dir;
      },
      changes: [`ENV ${PATH_ENV}`, 'WORKDIR /', 'EXPOSE 2379 2380 4001 7001', 'CMD ["/usr/local/bin/etcd"]'],
    },
    {
      // CoreDNS's Dockerfile: /coredns on distroless as nonroot; kubeadm's Deployment passes only args.
      ref: required(images, 'coredns'),
      inputs: glibcInputs,
      binaries: [bins.coredns],
      stage: async () => {
        const dir = await stage('coredns', [await glibc()]);
        systemFiles(dir);
        slim(dir);
        putBinary(dir, 'coredns', bins.coredns);
        return dir;
      },
      changes: [
        `ENV ${PATH_ENV}`,
        'USER nonroot:nonroot',
        'WORKDIR /',
        'EXPOSE 53 53/udp',
        'ENTRYPOINT ["/coredns"]',
      ],
    },
    pauseImage(required(images, 'pause')),
    {
      // kind's images/local-path-provisioner: the binary in /usr/local/bin on distroless/base; its
      // manifest runs `local-path-provisioner` by name. (kind's shell-form ENTRYPOINT, which needs a
      // shell distroless lacks, becomes the exec form.)
      ref: kind.storageProvisionerImage,
      inputs: glibcInputs,
      binaries: [bins.localPathProvisioner],
      stage: async () => {
        const dir = await stage('local-path-provisioner', [await glibc()]);
        systemFiles(dir);
        slim(dir);
        putBinary(dir, 'usr/local/bin/local-path-provisioner', bins.localPathProvisioner);
        return dir;
      },
      changes: [`ENV ${PATH_ENV}`, 'ENTRYPOINT ["/usr/local/bin/local-path-provisioner"]'],
    },
    {
      // kind's images/local-path-helper: sh, mkdir and rm for the provisioner's helper pods (which
      // run `/bin/sh /script/setup`); here every busybox applet, linked in place.
      ref: kind.storageHelperImage,
      inputs: [DEBIAN_SUITE, ...HELPER_PACKAGES, ...Object.values(IDENTITY_FILES)],
      binaries: [],
      stage: async () => {
        const dir = await stage('local-path-helper', [
          await unpackedPackages('local-path-helper', HELPER_PACKAGES),
        ]);
        systemFiles(dir);
        slim(dir);
        const applets = await runOk(join(dir, 'bin', 'busybox'), ['--list-full']);
        for (const applet of applets.split('\n').filter(Boolean)) {
          const target = join(dir, applet);
          if (existsSync(target)) continue;
          mkdirSync(dirname(target), { recursive: true });
          symlinkSync('/bin/busybox', target);
        }
        return dir;
      },
      changes: [`ENV ${PATH_ENV}`],
    },
  ];
  if (kind.sandboxImage !== required(images, 'pause')) specs.push(pauseImage(kind.sandboxImage));

  for (const spec of specs) await buildSpec(engine, spec);
  say(`${specs.length} images ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return specs.map((s) => s.ref);
}

/** A command an image runs to show it works, with the engine's `run` options it needs. */
export interface Verification {
  command: string[];
  options?: string[];
}

/** What each image runs to show it works: its binary's version (and kube-proxy's tools). */
export function verifications(ref: string): Verification[] {
  const name = imageName(ref);
  switch (name) {
    case 'kube-apiserver':
    case 'kube-controller-manager':
    case 'kube-scheduler':
      return [{ command: [name, '--version'] }];
    case 'kube-proxy': {
      // In the container's own network namespace: ipset and the back-end switch need NET_ADMIN.
      const options = ['--cap-add', 'NET_ADMIN'];
      return [
        { command: ['kube-proxy', '--version'] },
        {
          command: [
            'sh',
            '-c',
            'iptables --version && ip6tables --version && nft --version && conntrack --version && ipset --version',
          ],
          options,
        },
        // The kubelet's hint chain in legacy iptables makes the wrapper switch to legacy.
        {
          command: ['sh', '-c', 'iptables-legacy -t mangle -N KUBE-IPTABLES-HINT && iptables --version'],
          options,
        },
      ];
    }
    case 'etcd':
      return [{ command: ['etcd', '--version'] }, { command: ['etcdctl', 'version'] }];
    case 'coredns':
      return [{ command: ['-version'] }];
    case 'pause':
      return [{ command: ['-v'] }];
    case 'local-path-provisioner':
      return [{ command: ['--version'] }];
    case 'local-path-helper':
      return [
        {
          command: ['sh', '-c', 'id -un && mkdir -p /tmp/a/b && rm -r /tmp/a && echo sh, mkdir and rm work'],
        },
      ];
    default:
      return [];
  }
}

/** Runs each image's verifications under the engine; returns their output (stdout) by image. */
export async function verifyClusterImages(
  engine: ContainerEngine,
  refs: readonly string[],
): Promise<Record<string, string>> {
  const results: Record<string, string> = {};
  for (const ref of refs) {
    const outputs: string[] = [];
    for (const { command, options = [] } of verifications(ref)) {
      const result = await run(engine.bin, ['run', '--rm', '--network', 'none', ...options, ref, ...command]);
      if (result.code !== 0) {
        throw new Error(
          `${ref}: ${command.join(' ')} failed (exit ${result.code}): ${result.stdout}${result.stderr}`,
        );
      }
      outputs.push(result.stdout.trim() || result.stderr.trim());
    }
    results[ref] = outputs.join('\n');
  }
  return results;
}
