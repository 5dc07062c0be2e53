import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1ObjectMeta, V1PolicyRule } from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';
import { type RunResult, run } from '../../../e2e/providers/exec.ts';
import { toolchainPaths } from '../../../e2e/providers/local/toolchain.ts';

/** Reading the chart and the kustomize config as the objects they install. */

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const CHART_DIR = join(REPO_ROOT, 'charts', 'basic-operator');
export const CONFIG_DIR = join(REPO_ROOT, 'config');

/** The install the docs describe: `helm install basic-operator ... -n basic-operator-system`. */
export const DEFAULT_RELEASE = { name: 'basic-operator', namespace: 'basic-operator-system' } as const;

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: V1ObjectMeta & { name: string };
  [field: string]: unknown;
}

function isManifest(value: unknown): value is Manifest {
  if (typeof value !== 'object' || value === null) return false;
  const { apiVersion, kind, metadata } = value as Record<string, unknown>;
  return (
    typeof apiVersion === 'string' &&
    typeof kind === 'string' &&
    typeof metadata === 'object' &&
    metadata !== null &&
    typeof (metadata as Record<string, unknown>).name === 'string'
  );
}

/** Every object of a multi-document YAML stream; empty documents are skipped. */
export function parseManifests(yaml: string): Manifest[] {
  const out: Manifest[] = [];
  for (const doc of loadAll(yaml)) {
    if (doc === null || doc === undefined) continue;
    if (!isManifest(doc)) throw new Error(`not a Kubernetes object: ${JSON.stringify(doc).slice(0, 200)}`);
    out.push(doc);
  }
  return out;
}

export function readManifests(...pathInConfig: string[]): Manifest[] {
  return parseManifests(readFileSync(join(CONFIG_DIR, ...pathInConfig), 'utf8'));
}

/** The one object of this kind and name; T is the caller's view of its shape. */
export function find<T extends Manifest = Manifest>(manifests: Manifest[], kind: string, name: string): T {
  const matches = manifests.filter((m) => m.kind === kind && m.metadata.name === name);
  if (matches.length !== 1) {
    const present = manifests.map((m) => `${m.kind}/${m.metadata.name}`).join(', ');
    throw new Error(`expected one ${kind}/${name}, found ${matches.length} among: ${present}`);
  }
  return matches[0] as T;
}

export type RoleManifest = Manifest & { rules?: V1PolicyRule[] };

/** Rules in a canonical form, so two role definitions compare by meaning, not by order. */
export function normalizeRules(rules: readonly V1PolicyRule[] = []): V1PolicyRule[] {
  const sorted = (list: readonly string[] | undefined) => (list ? [...list].sort() : undefined);
  return rules
    .map((rule) => {
      const normalized: V1PolicyRule = { verbs: [...rule.verbs].sort() };
      for (const key of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) {
        const value = sorted(rule[key]);
        if (value && value.length > 0) normalized[key] = value;
      }
      return normalized;
    })
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

/** helm from the local toolchain (e2e/providers/local/toolchain.ts), or why the tests must skip. */
export const HELM = toolchainPaths().helm;
export const KUBECTL = toolchainPaths().kubectl;
export const HELM_MISSING: string | false = existsSync(HELM)
  ? false
  : `helm is not built at ${HELM}; run \`npm run cluster:build\` to build the toolchain`;

export function helm(args: string[]): Promise<RunResult> {
  return run(HELM, args, { cwd: REPO_ROOT, timeoutMs: 60_000 });
}

export interface TemplateOptions {
  release?: string;
  namespace?: string;
  /** `--set` arguments, e.g. ['replicaCount=3']. */
  set?: readonly string[];
  extraArgs?: readonly string[];
}

export function templateArgs(options: TemplateOptions = {}): string[] {
  const args = [
    'template',
    options.release ?? DEFAULT_RELEASE.name,
    CHART_DIR,
    '--namespace',
    options.namespace ?? DEFAULT_RELEASE.namespace,
  ];
  for (const value of options.set ?? []) args.push('--set', value);
  return [...args, ...(options.extraArgs ?? [])];
}

/** `helm template`, which must succeed; returns the rendered objects. */
export async function renderChart(options: TemplateOptions = {}): Promise<Manifest[]> {
  const result = await helm(templateArgs(options));
  if (result.code !== 0) throw new Error(`helm template failed (exit ${result.code}):\n${result.stderr}`);
  return parseManifests(result.stdout);
}
