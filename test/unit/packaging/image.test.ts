import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { LOCAL_BUILD_IMAGE, LOCAL_RUNTIME_IMAGE } from '../../../e2e/providers/kind/images/node-bases.ts';
import { baseImages, withDigests } from '../../../scripts/pin-base-images.ts';
import { REPO_ROOT } from './manifests.ts';

/**
 * The image is built for real only where a container engine runs (the kind provider builds it with
 * e2e/providers/kind/images/operator.ts, on local stand-ins of the base images where no registry
 * answers). These tests run everywhere and check what would break it: runtime code importing a
 * devDependency (the image has production dependencies only), version drift, and the Dockerfile's
 * shape that the local stand-ins and the kind provider rely on.
 */

interface PackageJson {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}
interface LockFile {
  packages: Record<
    string,
    { optionalDependencies?: Record<string, string>; hasInstallScript?: boolean; dev?: boolean }
  >;
}
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as PackageJson;
const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Bare specifiers of imports that survive compilation (`import type` is erased). */
function runtimeImports(source: string): string[] {
  const specifiers: string[] = [];
  const statement = /^\s*(?:import|export)\s+(?!type\s)(?:[^'"]*?\s+from\s+)?['"]([^'"]+)['"]/gm;
  for (const match of source.matchAll(statement)) specifiers.push(match[1] as string);
  for (const match of source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g))
    specifiers.push(match[1] as string);
  return specifiers.filter((s) => !s.startsWith('.'));
}

/** '@scope/name/sub' -> '@scope/name'; 'name/sub' -> 'name'. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

describe('the container image', () => {
  it('needs only production dependencies at run time (npm install --omit=dev)', () => {
    const builtins = new Set(builtinModules);
    const problems: string[] = [];
    for (const file of sourceFiles(join(REPO_ROOT, 'src'))) {
      for (const specifier of runtimeImports(readFileSync(file, 'utf8'))) {
        if (specifier.startsWith('node:') || builtins.has(specifier)) continue;
        const name = packageName(specifier);
        if (!(name in pkg.dependencies)) problems.push(`${relative(REPO_ROOT, file)} imports ${specifier}`);
      }
    }
    assert.deepEqual(problems, [], 'move these packages to dependencies, or import them with `import type`');
  });

  it('builds with the Node version package.json pins', () => {
    const match = /^ARG NODE_VERSION=(\S+)$/m.exec(dockerfile);
    assert.equal(match?.[1], pkg.devDependencies.node);
    assert.match(
      dockerfile,
      /^ARG BUILD_IMAGE=node:\$\{NODE_VERSION\}-bookworm-slim(@sha256:[0-9a-f]{64})?$/m,
    );
    assert.match(dockerfile, /^FROM \$\{BUILD_IMAGE\} AS build$/m);
    assert.match(dockerfile, /^FROM \$\{BUILD_IMAGE\} AS prod-deps$/m);
  });

  it('takes its base images as build arguments declared before the first FROM', () => {
    const firstFrom = dockerfile.search(/^FROM /m);
    for (const arg of ['NODE_VERSION', 'BUILD_IMAGE', 'RUNTIME_IMAGE']) {
      const at = dockerfile.search(new RegExp(`^ARG ${arg}=`, 'm'));
      assert.ok(at >= 0 && at < firstFrom, `ARG ${arg} with a default, before the first FROM`);
    }
  });

  it('runs dist/main.js with node as PID 1, as a numeric non-root user', () => {
    const major = pkg.devDependencies.node?.split('.')[0];
    assert.match(
      dockerfile,
      new RegExp(
        `^ARG RUNTIME_IMAGE=gcr\\.io/distroless/nodejs${major}-debian12:nonroot(@sha256:[0-9a-f]{64})?$`,
        'm',
      ),
    );
    const lastFrom = [...dockerfile.matchAll(/^FROM (.*)$/gm)].map((m) => m[1]).at(-1);
    assert.match(lastFrom ?? '', /^\$\{RUNTIME_IMAGE\}$/, 'the last stage runs on RUNTIME_IMAGE');
    assert.match(dockerfile, /^USER 65532:65532$/m);
    // node itself, its flags (source maps, the heap sized from the memory limit), then the script.
    assert.match(
      dockerfile,
      /^ENTRYPOINT \["\/nodejs\/bin\/node", "--enable-source-maps", ("--[a-z-]+=[0-9]+", )*"dist\/main\.js"\]$/m,
    );
    assert.match(dockerfile, /"--max-old-space-size-percentage=\d+"/);
    assert.match(dockerfile, /npm ci --omit=dev --ignore-scripts/);
    assert.match(dockerfile, /RUN npm run build/);
  });

  it('has local stand-ins named after its default base images (kind on machines with no registry)', () => {
    const [build, runtime] = baseImages(dockerfile);
    assert.equal(LOCAL_BUILD_IMAGE, `basic-operator.local/${build?.ref}`);
    assert.equal(LOCAL_RUNTIME_IMAGE, `basic-operator.local/${runtime?.ref.split('/').at(-1)}`);
  });

  it('installs with npm ci and no install scripts in every stage', () => {
    const installs = [...dockerfile.matchAll(/^RUN (npm (?:install|ci)\b.*)$/gm)].map((m) => m[1] as string);
    assert.equal(installs.length, 2, installs.join('\n'));
    for (const install of installs) {
      assert.match(install, /^npm ci /, install);
      assert.match(install, / --ignore-scripts\b/, install);
    }
    // The build needs no install script: the only one among the dependencies is the `node`
    // devDependency's (it fetches the Node binary this project's own scripts run on).
    const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as LockFile;
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([path, entry]) => `${path}${entry.dev ? '' : ' (production)'}`);
    assert.deepEqual(withScripts, ['node_modules/node']);
  });

  it("lists every platform's optional native packages in package-lock.json, which npm ci needs", () => {
    const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as LockFile;
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        // Resolved as Node does: next to the package, then in each node_modules above it.
        const candidates: string[] = [];
        for (let at = path; ; at = at.slice(0, Math.max(0, at.lastIndexOf('/node_modules/')))) {
          candidates.push(`${at ? `${at}/` : ''}node_modules/${name}`);
          if (!at.includes('/node_modules/')) {
            if (at) candidates.push(`node_modules/${name}`);
            break;
          }
        }
        if (!candidates.some((candidate) => candidate in lock.packages))
          missing.push(`${path || '(root)'} -> ${name}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  it('pins base images by digest with scripts/pin-base-images.ts, keeping the tag and the version ARG', () => {
    const build = `sha256:${'1'.repeat(64)}`;
    const runtime = `sha256:${'2'.repeat(64)}`;
    const pinned = withDigests(dockerfile, { BUILD_IMAGE: build, RUNTIME_IMAGE: runtime });
    assert.match(pinned, /^ARG BUILD_IMAGE=node:\$\{NODE_VERSION\}-bookworm-slim@sha256:1{64}$/m);
    assert.deepEqual(
      baseImages(pinned).map((image) => [image.ref, image.digest]),
      baseImages(dockerfile).map((image) => [image.ref, image.arg === 'BUILD_IMAGE' ? build : runtime]),
    );
    // Pinning again replaces the digest; the stand-ins' names do not change.
    const again = withDigests(pinned, { RUNTIME_IMAGE: build });
    assert.equal(baseImages(again)[1]?.digest, build);
    assert.equal(again.split('\n').length, dockerfile.split('\n').length);
    assert.throws(() => withDigests(dockerfile, { BUILD_IMAGE: 'latest' }), /not a digest/);
  });
});
