import { type RunResult, run } from '../../../e2e/providers/exec.ts';
import { testCluster } from '../../../e2e/support/cluster.ts';
import {
  CHART_DIR,
  DEFAULT_RELEASE,
  type Manifest,
  parseManifests,
  REPO_ROOT,
} from '../../unit/packaging/manifests.ts';

/**
 * helm of the test cluster's toolchain (Go-built, so these tests are integration tests: the
 * cluster's provider builds it, where a unit test could only skip itself without it).
 */
export async function helm(args: string[]): Promise<RunResult> {
  return run((await testCluster()).helm, args, { cwd: REPO_ROOT, timeoutMs: 60_000 });
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
