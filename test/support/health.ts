// What the tools users deploy with say about an object: kstatus (sigs.k8s.io/cli-utils, as kubectl
// wait, Helm --wait and Flux compute it) and Argo CD's health (our config/argocd health.lua, run
// with gopher-lua as Argo CD runs it). Both are small Go programs built from the Go module proxy.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runOk } from '../../e2e/providers/exec.ts';
import { ensureGoTool } from '../../e2e/providers/local/go-tools.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES = join(ROOT, 'test', 'fixtures', 'health');

export type KstatusStatus = 'InProgress' | 'Failed' | 'Current' | 'Terminating' | 'NotFound' | 'Unknown';
export type ArgoHealth = 'Healthy' | 'Progressing' | 'Degraded' | 'Suspended' | 'Missing' | 'Unknown';

export interface HealthObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
}

/** kstatus's verdict on each object, in order. */
export async function kstatus(
  objects: readonly HealthObject[],
): Promise<Array<{ status: KstatusStatus; message: string }>> {
  const tool = await ensureGoTool('kstatus');
  const out = await runOk(tool, [], { input: objects.map((o) => JSON.stringify(o)).join('\n') });
  return lines(out);
}

/** The Argo CD health script of a kind, in Argo CD's resource_customizations layout. */
export function healthScript(apiVersion: string, kind: string): string {
  const group = apiVersion.split('/')[0] ?? '';
  return join(ROOT, 'config', 'argocd', 'resource_customizations', group, kind, 'health.lua');
}

/** Argo CD's health of each object (all of one kind), from its health.lua run with gopher-lua. */
export async function argoHealth(
  objects: readonly HealthObject[],
): Promise<Array<{ status: ArgoHealth; message: string }>> {
  const first = objects[0];
  if (!first?.apiVersion || !first.kind) throw new Error('objects need apiVersion and kind');
  const tool = await ensureGoTool('argocd-lua');
  const script = healthScript(first.apiVersion, first.kind);
  const out = await runOk(tool, [script], { input: objects.map((o) => JSON.stringify(o)).join('\n') });
  return lines(out);
}

function lines<T>(out: string): T[] {
  return out
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

/** A recorded object: what a live object looked like in a state, for the Argo CD script tests. */
export interface HealthFixture {
  /** What the object was made to be (e.g. "a rollout past its progress deadline"). */
  state: string;
  kstatus: KstatusStatus;
  argocd: ArgoHealth;
  object: HealthObject;
}

export function fixturePath(name: string): string {
  return join(FIXTURES, `${name}.json`);
}

/** Writes a fixture from a live object, without fields that only add noise (managedFields). */
export function recordFixture(name: string, fixture: HealthFixture): void {
  const object = structuredClone(fixture.object) as HealthObject & { metadata?: Record<string, unknown> };
  if (object.metadata) delete object.metadata.managedFields;
  writeFileSync(fixturePath(name), `${JSON.stringify({ ...fixture, object }, null, 2)}\n`);
}

export function readFixture(file: string): HealthFixture {
  return JSON.parse(readFileSync(file, 'utf8')) as HealthFixture;
}
