import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runOk } from '../../exec.ts';
import { cacheRoot } from '../../local/toolchain.ts';
import { fingerprintOf } from '../image-cache.ts';

/** Debian release every locally built image starts from (kind's base image is bookworm-slim). */
export const DEBIAN_SUITE = 'bookworm';
export const DEBIAN_MIRROR = process.env.BASIC_OPERATOR_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';

function say(message: string): void {
  process.stderr.write(`[images] ${message}\n`);
}

function rootfsDir(name: string, fingerprint: string): string {
  return join(cacheRoot(), 'kind', 'rootfs', `${name}-${fingerprint}`);
}

/**
 * A Debian root file system made by `debootstrap --variant=minbase` with `packages`, cached under
 * the cache folder by name and package list (about a minute from the mirror). Returns its folder.
 * Needs root (debootstrap chroots to configure the packages).
 */
export async function debootstrapRootfs(name: string, packages: readonly string[]): Promise<string> {
  const fingerprint = fingerprintOf([DEBIAN_SUITE, DEBIAN_MIRROR, ...[...packages].sort()]);
  const target = rootfsDir(name, fingerprint);
  if (existsSync(join(target, '.complete'))) return target;
  const partial = `${target}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  say(`debootstrap ${DEBIAN_SUITE} (${name}: ${packages.join(', ')}) from ${DEBIAN_MIRROR}`);
  const started = Date.now();
  await runOk(
    'debootstrap',
    ['--variant=minbase', `--include=${packages.join(',')}`, DEBIAN_SUITE, partial, DEBIAN_MIRROR],
    { timeoutMs: 20 * 60_000 },
  );
  // The package cache is not part of an image.
  rmSync(join(partial, 'var', 'cache', 'apt', 'archives'), { recursive: true, force: true });
  mkdirSync(join(partial, 'var', 'cache', 'apt', 'archives', 'partial'), { recursive: true });
  rmSync(join(partial, 'var', 'lib', 'apt', 'lists'), { recursive: true, force: true });
  mkdirSync(join(partial, 'var', 'lib', 'apt', 'lists'), { recursive: true });
  writeFileSync(join(partial, '.complete'), `${new Date().toISOString()}\n`);
  removeOlder(name, target);
  renameSync(partial, target);
  say(`debootstrap ${name} done in ${((Date.now() - started) / 1000).toFixed(0)}s`);
  return target;
}

/**
 * The contents of Debian packages unpacked into one folder, without running their scripts (for
 * images with no shell and no package manager, as distroless images are made). Cached like above.
 */
export async function unpackedPackages(name: string, packages: readonly string[]): Promise<string> {
  const fingerprint = fingerprintOf(['unpacked', DEBIAN_SUITE, ...[...packages].sort()]);
  const target = rootfsDir(name, fingerprint);
  if (existsSync(join(target, '.complete'))) return target;
  const partial = `${target}.partial`;
  const debs = `${target}.debs`;
  rmSync(partial, { recursive: true, force: true });
  rmSync(debs, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  mkdirSync(debs, { recursive: true });
  say(`apt-get download ${packages.join(' ')}`);
  await runOk('apt-get', ['download', ...packages], { cwd: debs, timeoutMs: 10 * 60_000 });
  for (const deb of readdirSync(debs).filter((f) => f.endsWith('.deb'))) {
    await runOk('dpkg-deb', ['-x', join(debs, deb), partial]);
  }
  rmSync(debs, { recursive: true, force: true });
  writeFileSync(join(partial, '.complete'), `${new Date().toISOString()}\n`);
  removeOlder(name, target);
  renameSync(partial, target);
  return target;
}

/** Earlier builds of the same root file system (other fingerprints) are removed. */
function removeOlder(name: string, keep: string): void {
  const parent = join(keep, '..');
  if (!existsSync(parent)) return;
  for (const entry of readdirSync(parent)) {
    const path = join(parent, entry);
    if (entry.startsWith(`${name}-`) && path !== keep && !entry.endsWith('.partial')) {
      rmSync(path, { recursive: true, force: true });
    }
  }
}
