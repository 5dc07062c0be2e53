import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * `node scripts/pin-base-images.ts [--check]`: pins the Dockerfile's base images by digest, for a
 * release. It asks the registry (`docker buildx imagetools inspect`) for the digest each tag names
 * now, the multi-platform index's, and writes it after the tag in the ARG's default
 * (`ARG BUILD_IMAGE=node:${NODE_VERSION}-bookworm-slim@sha256:...`), so the release builds on exactly
 * the images it names whatever the tag points to later. Run it where a registry answers, and again
 * after changing NODE_VERSION. `--check` changes nothing and fails when an image is not pinned.
 * Local builds with other base images (the kind provider's stand-ins) still pass --build-arg.
 */

const DOCKERFILE = fileURLToPath(new URL('../Dockerfile', import.meta.url));
export const BASE_IMAGE_ARGS = ['BUILD_IMAGE', 'RUNTIME_IMAGE'] as const;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

export interface BaseImage {
  arg: (typeof BASE_IMAGE_ARGS)[number];
  /** The default as written, ${...} references included. */
  written: string;
  /** The reference with the ARGs it names filled in, without its digest. */
  ref: string;
  digest: string | undefined;
}

/** The Dockerfile's base-image ARGs with their defaults, ${NAME} filled from earlier ARGs. */
export function baseImages(dockerfile: string): BaseImage[] {
  const defaults = new Map<string, string>();
  for (const match of dockerfile.matchAll(/^ARG (\w+)=(\S+)$/gm)) defaults.set(match[1]!, match[2]!);
  return BASE_IMAGE_ARGS.map((arg) => {
    const written = defaults.get(arg);
    if (!written) throw new Error(`Dockerfile: no default for ARG ${arg}`);
    const filled = written.replace(/\$\{(\w+)\}/g, (_, name: string) => {
      const value = defaults.get(name);
      if (value === undefined)
        throw new Error(`Dockerfile: ARG ${arg} names \${${name}}, which has no default`);
      return value;
    });
    const [ref = '', digest] = filled.split('@');
    if (digest !== undefined && !DIGEST.test(digest))
      throw new Error(`Dockerfile: ARG ${arg}: bad digest ${digest}`);
    return { arg, written, ref, digest };
  });
}

/** The Dockerfile with each named ARG's default pinned to its digest (any earlier digest replaced). */
export function withDigests(dockerfile: string, digests: Partial<Record<BaseImage['arg'], string>>): string {
  let out = dockerfile;
  for (const image of baseImages(dockerfile)) {
    const digest = digests[image.arg];
    if (digest === undefined) continue;
    if (!DIGEST.test(digest)) throw new Error(`${image.ref}: not a digest: ${digest}`);
    const tag = image.written.split('@')[0];
    out = out.replace(`ARG ${image.arg}=${image.written}\n`, `ARG ${image.arg}=${tag}@${digest}\n`);
  }
  return out;
}

/** The digest `ref` names in its registry now: the index's for a multi-platform image. */
function resolveDigest(ref: string): string {
  const inspected = spawnSync(
    'docker',
    ['buildx', 'imagetools', 'inspect', ref, '--format', '{{json .Manifest}}'],
    { encoding: 'utf8' },
  );
  if (inspected.status !== 0) {
    throw new Error(`docker buildx imagetools inspect ${ref} failed: ${inspected.stderr || inspected.error}`);
  }
  const digest = (JSON.parse(inspected.stdout) as { digest?: string }).digest ?? '';
  if (!DIGEST.test(digest))
    throw new Error(`${ref}: the registry gave no digest (${inspected.stdout.slice(0, 200)})`);
  return digest;
}

function main(argv: string[]): number {
  const dockerfile = readFileSync(DOCKERFILE, 'utf8');
  if (argv.includes('--check')) {
    const unpinned = baseImages(dockerfile).filter((image) => !image.digest);
    for (const image of unpinned)
      process.stderr.write(`${image.arg} (${image.ref}) is not pinned by digest\n`);
    return unpinned.length === 0 ? 0 : 1;
  }
  const digests: Partial<Record<BaseImage['arg'], string>> = {};
  for (const image of baseImages(dockerfile)) {
    digests[image.arg] = resolveDigest(image.ref);
    process.stdout.write(`${image.arg}: ${image.ref}@${digests[image.arg]}\n`);
  }
  writeFileSync(DOCKERFILE, withDigests(dockerfile, digests));
  return 0;
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2));
