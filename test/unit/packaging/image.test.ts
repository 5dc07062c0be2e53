import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from './manifests.ts';

/**
 * The image (Dockerfile) cannot be built here, so these tests check what would break it: runtime
 * code importing a devDependency (the image has production dependencies only) and version drift.
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
  it('needs only production dependencies at run time (npm ci --omit=dev)', () => {
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
    assert.match(dockerfile, /^FROM node:\$\{NODE_VERSION\}-bookworm-slim AS build$/m);
  });

  it('runs dist/main.js with node as PID 1, as a numeric non-root user', () => {
    assert.match(dockerfile, /^FROM gcr\.io\/distroless\/nodejs24-debian12:nonroot$/m);
    assert.match(dockerfile, /^USER 65532:65532$/m);
    assert.match(
      dockerfile,
      /^ENTRYPOINT \["\/nodejs\/bin\/node", "--enable-source-maps", "dist\/main\.js"\]$/m,
    );
    assert.match(dockerfile, /npm ci --omit=dev/);
    assert.match(dockerfile, /RUN npm run build/);
  });
});
