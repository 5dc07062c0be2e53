import { lstatSync, realpathSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { copyTree } from './copy.ts';
import { displayPath } from './display.ts';
import { emptyDirectory } from './empty.ts';
import { FsError, MoverError, onPath } from './errors.ts';
import { computeManifest, type Manifest } from './manifest.ts';
import { checkOwnership, type Identity } from './ownership.ts';
import { verifyCopy } from './verify.ts';

export interface CopyOptions {
  readonly source: string;
  readonly target: string;
  /** For a restore: the manifest the target must have (the backup's). */
  readonly expect?: Manifest;
  /** Named in the Ownership message: why the copy does not run as root. */
  readonly podSecurityLevel?: string;
}

/** What a successful copy reports. */
export interface CopyReport {
  readonly source: Manifest;
  readonly target: Manifest;
  /** Emptying the target and copying. */
  readonly copyMs: number;
  /** Computing both manifests. */
  readonly manifestMs: number;
}

/**
 * Copies `source` into `target` and verifies the result: the target's manifest must equal the
 * source's, or the expected one. Throws a MoverError saying why not.
 */
export function runCopy(options: CopyOptions, identity: Identity): CopyReport {
  requireDirectory(options.source, '--source');
  requireDirectory(options.target, '--target');
  requireApart(options.source, options.target);
  if (identity.uid !== 0) checkOwnership(options.source, identity, options.podSecurityLevel);

  let started = performance.now();
  const source = computeManifest(options.source);
  let manifestMs = performance.now() - started;

  started = performance.now();
  const progress = { bytes: 0 };
  try {
    emptyDirectory(options.target, identity.uid);
    copyTree(options.source, options.target, progress);
  } catch (error) {
    if (error instanceof FsError && (error.code === 'ENOSPC' || error.code === 'EDQUOT')) {
      throw new MoverError(
        'NoSpace',
        `the target claim is too small: ${error.code} after ${progress.bytes} of the source's ${source.bytes} ` +
          `bytes were written, at ${displayPath(error.path)}`,
      );
    }
    throw error;
  }
  const copyMs = performance.now() - started;

  started = performance.now();
  const target = computeManifest(options.target);
  manifestMs += performance.now() - started;

  verifyCopy(source, target, options.expect);
  return { source, target, copyMs: Math.round(copyMs), manifestMs: Math.round(manifestMs) };
}

function requireDirectory(dir: string, flag: string): void {
  const path = Buffer.from(dir);
  const stats = onPath(path, 'lstat', () => lstatSync(path));
  if (!stats.isDirectory()) throw new MoverError('Usage', `${flag} ${dir} is not a directory`);
}

/** Emptying a target that is, holds or lies inside the source would destroy the source. */
function requireApart(source: string, target: string): void {
  const real = (dir: string): string => onPath(Buffer.from(dir), 'realpath', () => realpathSync(dir));
  const [from, to] = [real(source), real(target)];
  const inside = (dir: string, path: string): boolean =>
    path === dir || path.startsWith(dir === '/' ? dir : `${dir}/`);
  if (inside(from, to) || inside(to, from)) {
    throw new MoverError('Usage', `--source ${source} and --target ${target} overlap`);
  }
}
