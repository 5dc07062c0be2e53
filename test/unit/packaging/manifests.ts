import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1AggregationRule, V1ObjectMeta, V1PolicyRule } from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';

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

export type RoleManifest = Manifest & { rules?: V1PolicyRule[]; aggregationRule?: V1AggregationRule };

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

/** The roles config/rbac defines, and the file each is in. */
export const RBAC_ROLES: ReadonlyArray<{ kind: 'ClusterRole' | 'Role'; name: string; file: string }> = [
  { kind: 'ClusterRole', name: 'basic-operator-manager', file: 'role.yaml' },
  { kind: 'ClusterRole', name: 'basic-operator-manager-base', file: 'role.yaml' },
  { kind: 'Role', name: 'basic-operator-leader-election', file: 'leader_election_role.yaml' },
  { kind: 'ClusterRole', name: 'basic-operator-edit', file: 'aggregate_roles.yaml' },
  { kind: 'ClusterRole', name: 'basic-operator-view', file: 'aggregate_roles.yaml' },
  { kind: 'ClusterRole', name: 'basic-operator-metrics-reader', file: 'metrics_reader_role.yaml' },
];
