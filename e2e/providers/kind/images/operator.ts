import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildImage, type ContainerEngine } from '../engine.ts';
import { ensureImage, FINGERPRINT_LABEL } from '../image-cache.ts';
import { ensureNodeBases } from './node-bases.ts';

const REPO_ROOT = join(fileURLToPath(import.meta.url), '..', '..', '..', '..', '..');

/** The operator image the kind provider loads (the same name as IMAGE in ../index.ts). */
export const OPERATOR_IMAGE = 'basic-operator:dev';

/** What the Dockerfile's build reads (.dockerignore lets only these into the context). */
const BUILD_FILES = [
  'Dockerfile',
  '.dockerignore',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
];

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? filesUnder(path) : [path];
    })
    .sort();
}

/** Every input of the build, each as its path and contents. */
function buildInputs(): Array<string | Buffer> {
  const files = [...BUILD_FILES.map((f) => join(REPO_ROOT, f)), ...filesUnder(join(REPO_ROOT, 'src'))];
  return files.flatMap((file) => [relative(REPO_ROOT, file), readFileSync(file)]);
}

export interface OperatorImageOptions {
  /**
   * Build on the local stand-ins of the Dockerfile's base images (node-bases.ts), built first when
   * missing, instead of the public defaults (node:<version>-bookworm-slim, distroless nodejs).
   */
  localBases: boolean;
}

/**
 * The repo's Dockerfile built as OPERATOR_IMAGE (classic builder), rebuilt only when the Dockerfile,
 * the package files, the tsconfig files, a file under src/ or a base image changed. Returns the ref.
 */
export async function ensureOperatorImage(
  engine: ContainerEngine,
  options: OperatorImageOptions,
): Promise<string> {
  const buildArgs: Record<string, string> = {};
  const inputs: Array<string | Buffer> = [];
  if (options.localBases) {
    const bases = await ensureNodeBases(engine);
    buildArgs.BUILD_IMAGE = bases.build.ref;
    buildArgs.RUNTIME_IMAGE = bases.runtime.ref;
    inputs.push(bases.build.ref, bases.build.fingerprint, bases.runtime.ref, bases.runtime.fingerprint);
  } else {
    inputs.push('public bases');
  }
  inputs.push(...buildInputs());
  await ensureImage(engine, {
    ref: OPERATOR_IMAGE,
    inputs,
    build: (fingerprint) =>
      buildImage(engine, {
        context: REPO_ROOT,
        tag: OPERATOR_IMAGE,
        buildArgs,
        labels: { [FINGERPRINT_LABEL]: fingerprint },
      }),
  });
  return OPERATOR_IMAGE;
}
