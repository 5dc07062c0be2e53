import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { LOCAL_BUILD_IMAGE, LOCAL_RUNTIME_IMAGE } from '../../../e2e/providers/kind/images/node-bases.ts';
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
    assert.match(dockerfile, /^ARG BUILD_IMAGE=node:\$\{NODE_VERSION\}-bookworm-slim$/m);
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
      new RegExp(`^ARG RUNTIME_IMAGE=gcr\\.io/distroless/nodejs${major}-debian12:nonroot$`, 'm'),
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
    assert.match(dockerfile, /npm install --omit=dev/);
    assert.match(dockerfile, /RUN npm run build/);
  });

  it('has local stand-ins named after its default base images (kind on machines with no registry)', () => {
    const defaults = Object.fromEntries(
      [...dockerfile.matchAll(/^ARG (\w+)=(\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]),
    );
    const buildImage = (defaults.BUILD_IMAGE ?? '').replace(
      /\$\{NODE_VERSION\}/,
      defaults.NODE_VERSION ?? '',
    );
    assert.equal(LOCAL_BUILD_IMAGE, `basic-operator.local/${buildImage}`);
    const runtimeImage = (defaults.RUNTIME_IMAGE ?? '').split('/').at(-1);
    assert.equal(LOCAL_RUNTIME_IMAGE, `basic-operator.local/${runtimeImage}`);
  });
});
