import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1Deployment, V1ObjectMeta } from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';
import { removeOperatorFinalizers } from '../../support/abandoned-namespaces.ts';
import type { ClusterTools } from './kube.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const CHART_DIR = join(REPO_ROOT, 'charts', 'basic-operator');
export const CRD_DIR = join(REPO_ROOT, 'config', 'crd', 'bases');
export const SAMPLES_DIR = join(REPO_ROOT, 'config', 'samples');

/** One object of a rendered chart. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: V1ObjectMeta & { name: string };
  [field: string]: unknown;
}

function isManifest(value: unknown): value is Manifest {
  if (typeof value !== 'object' || value === null) return false;
  const { kind, metadata } = value as Record<string, unknown>;
  return typeof kind === 'string' && typeof metadata === 'object' && metadata !== null;
}

export function parseManifests(yaml: string): Manifest[] {
  return loadAll(yaml).filter(isManifest);
}

/** Chart values as a plain object (written to a values file, never through --set escaping). */
export type Values = Record<string, unknown>;

/**
 * A Helm release of charts/basic-operator. CRDs are cluster-scoped and shared with every other test
 * on the cluster, so the release never installs them (--skip-crds): installCrds() applies them.
 */
export class HelmRelease {
  readonly name: string;
  readonly namespace: string;
  private readonly tools: ClusterTools;
  private readonly workdir: string;
  private revision = 0;

  constructor(tools: ClusterTools, name: string, namespace: string, workdir: string) {
    this.tools = tools;
    this.name = name;
    this.namespace = namespace;
    this.workdir = workdir;
  }

  private valuesFile(values: Values): string {
    this.revision += 1;
    const file = join(this.workdir, `values-${this.revision}.json`);
    writeFileSync(file, JSON.stringify(values, null, 2));
    return file;
  }

  /** `helm template` with the same values as an install: what the release puts in the cluster. */
  async template(values: Values): Promise<Manifest[]> {
    const out = await this.tools.helmOk([
      'template',
      this.name,
      CHART_DIR,
      '--namespace',
      this.namespace,
      '--skip-crds',
      '--values',
      this.valuesFile(values),
    ]);
    return parseManifests(out);
  }

  async install(values: Values): Promise<void> {
    await this.tools.helmOk([
      'install',
      this.name,
      CHART_DIR,
      '--namespace',
      this.namespace,
      '--skip-crds',
      '--values',
      this.valuesFile(values),
      '--wait',
      '--timeout',
      '3m',
    ]);
  }

  /** Pass every value again (not --reuse-values), as docs/install.md advises. */
  async upgrade(values: Values): Promise<void> {
    await this.tools.helmOk([
      'upgrade',
      this.name,
      CHART_DIR,
      '--namespace',
      this.namespace,
      '--values',
      this.valuesFile(values),
      '--wait',
      '--timeout',
      '3m',
    ]);
  }

  async uninstall(): Promise<void> {
    await this.tools.helmOk(['uninstall', this.name, '--namespace', this.namespace, '--wait']);
  }

  async isInstalled(): Promise<boolean> {
    const result = await this.tools.helm(['status', this.name, '--namespace', this.namespace]);
    return result.code === 0;
  }
}

/** The one object of this kind in the rendered chart (the operator's Deployment, say). */
export function theOnly<T>(manifests: Manifest[], kind: string): T & Manifest {
  const matches = manifests.filter((m) => m.kind === kind);
  if (matches.length !== 1) {
    throw new Error(`expected one ${kind} in the rendered chart, found ${matches.length}`);
  }
  return matches[0] as T & Manifest;
}

export function operatorDeployment(manifests: Manifest[]): V1Deployment & Manifest {
  return theOnly<V1Deployment>(manifests, 'Deployment');
}

/** Applies the generated CRDs (server-side: other tests apply the same ones) and waits until served. */
export async function installCrds(tools: ClusterTools): Promise<void> {
  await tools.kubectlOk(['apply', '--server-side', '--force-conflicts', '-f', CRD_DIR]);
  await tools.kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', '-f', CRD_DIR]);
}

/**
 * After a suite: the release uninstalled (if still there), the operator's finalizers on what is left
 * in `workloadNamespace` removed (without the operator nobody would, and the namespace would stay
 * Terminating for good), and both namespaces deleted without waiting.
 */
export async function tearDownRelease(
  tools: ClusterTools,
  release: HelmRelease,
  workloadNamespace: string,
): Promise<void> {
  if (await release.isInstalled()) await release.uninstall().catch(() => undefined);
  await removeOperatorFinalizers(tools.cluster, workloadNamespace);
  await tools.kubectl([
    'delete',
    'namespace',
    workloadNamespace,
    release.namespace,
    '--wait=false',
    '--ignore-not-found',
  ]);
}
