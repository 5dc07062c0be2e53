import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { V1ConfigMap, V1Lease } from '@kubernetes/client-node';
import { OperatorProcess } from '../../e2e/support/operator-process.ts';
import { isNotFound } from '../../src/runtime/client/errors.ts';
import type { KubeObject } from '../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../../src/runtime/client/resource.ts';
import type { Predicate } from '../../src/runtime/controller/predicates.ts';
import type { ReconcileContext, Request } from '../../src/runtime/controller/reconciler.ts';
import type { Manager } from '../../src/runtime/manager/manager.ts';
import { runMain } from '../../src/runtime/manager/run.ts';

/**
 * A stand-in operator for process-level tests (leader election, graceful shutdown): the same entry
 * shape as src/main.ts (parseConfig, new Manager, SIGTERM -> manager.stop() then exit 0) with two
 * test controllers instead of the real ones. Run it as
 *   node test/support/fixture-operator.ts --kubeconfig ... --namespaces ns [manager flags]
 * (startFixture() below does).
 * Logs are the manager's JSON lines on stdout; tests read identities, ports and progress from them.
 *
 * - "marker" reconciles ConfigMaps labelled test=marker by stamping MARKER_ANNOTATION with this
 *   process's leader-election identity, so a test can see which replica reconciled what.
 * - "slow" reconciles ConfigMaps labelled test=slow: logs SLOW_STARTED, waits
 *   $FIXTURE_SLOW_RECONCILE_MS (default 2000), stamps DONE_ANNOTATION, logs SLOW_FINISHED.
 * - Every Lease the manager reads (each poll of a standby; a leader renews without reading) is logged
 *   as LEASE_READ with the holder it names, so a test sees when a standby has looked and decided.
 */

export const MARKER_ANNOTATION = 'test.basicoperator.dev/reconciled-by';
export const DONE_ANNOTATION = 'test.basicoperator.dev/done-by';
export const FIXTURE_STARTED = 'fixture operator starting';
export const SLOW_STARTED = 'fixture slow reconcile started';
export const SLOW_FINISHED = 'fixture slow reconcile finished';
export const LEASE_READ = 'fixture read the leader lease';

function labelled(value: string): Predicate {
  const matches = (obj: { metadata?: { labels?: Record<string, string> } }) =>
    obj.metadata?.labels?.test === value;
  return { create: matches, update: (_old, obj) => matches(obj), delete: matches };
}

async function stamp(
  manager: Manager,
  request: Request,
  annotation: string,
  value: string,
  signal: AbortSignal,
): Promise<void> {
  try {
    await manager.client.patch(CoreTypes.ConfigMap, {
      namespace: request.namespace,
      name: request.name,
      patchType: 'merge',
      body: { metadata: { annotations: { [annotation]: value } } },
      signal,
    });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

function registerFixtureControllers(manager: Manager): void {
  const identity = manager.config.leaderElection.identity;
  const configMaps = manager.cache.informerFor<V1ConfigMap>(CoreTypes.ConfigMap);
  const slowMs = Number(process.env.FIXTURE_SLOW_RECONCILE_MS ?? 2000);

  manager
    .controller('marker')
    .for(CoreTypes.ConfigMap, labelled('marker'))
    .complete({
      async reconcile(request: Request, ctx: ReconcileContext) {
        const cm = configMaps.get(request.namespace, request.name);
        if (!cm || cm.metadata?.annotations?.[MARKER_ANNOTATION] === identity) return undefined;
        await stamp(manager, request, MARKER_ANNOTATION, identity, ctx.signal);
        ctx.log.info('fixture marked', { configMap: request.name });
        return undefined;
      },
    });

  manager
    .controller('slow')
    .for(CoreTypes.ConfigMap, labelled('slow'))
    .complete({
      async reconcile(request: Request, ctx: ReconcileContext) {
        const cm = configMaps.get(request.namespace, request.name);
        if (!cm || cm.metadata?.annotations?.[DONE_ANNOTATION]) return undefined;
        ctx.log.info(SLOW_STARTED, { configMap: request.name });
        // Only a lost lease aborts the signal; a graceful shutdown lets this finish.
        await delay(slowMs, undefined, { signal: ctx.signal });
        await stamp(manager, request, DONE_ANNOTATION, ctx.reconcileId, ctx.signal);
        ctx.log.info(SLOW_FINISHED, { configMap: request.name });
        return undefined;
      },
    });
}

function logLeaseReads(manager: Manager): void {
  const client = manager.leaseClient;
  const get = client.get.bind(client);
  client.get = async <T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
    signal?: AbortSignal,
  ): Promise<T> => {
    const obj = await get(type, namespace, name, signal);
    if (type.kind === CoreTypes.Lease.kind) {
      manager.log.info(LEASE_READ, { lease: name, holder: (obj as V1Lease).spec?.holderIdentity ?? '' });
    }
    return obj;
  };
}

/** Starts this file as a child process; `env` adds to this process's environment. */
export function startFixture(name: string, args: string[], env: NodeJS.ProcessEnv = {}): OperatorProcess {
  return new OperatorProcess({
    name,
    args: [fileURLToPath(import.meta.url), ...args],
    env: { ...process.env, ...env },
  });
}

/** Flags every fixture process gets: the cluster, one namespace, ephemeral ports, info logs. */
export function fixtureFlags(kubeconfig: string, namespace: string): string[] {
  return [
    '--kubeconfig',
    kubeconfig,
    '--namespaces',
    namespace,
    '--metrics-secure=false',
    '--metrics-bind-address',
    '127.0.0.1:0',
    '--health-probe-bind-address',
    '127.0.0.1:0',
    '--log-level',
    'info',
  ];
}

/** The leader-election identity a fixture process logs as it starts. */
export async function fixtureIdentity(fixture: OperatorProcess): Promise<string> {
  const line = await fixture.waitForLog('its identity', (l) => l.message === FIXTURE_STARTED);
  return String(line.identity);
}

// Tests import the names above; only running the file starts an operator.
if (import.meta.main) {
  runMain(process.argv.slice(2), {
    name: 'fixture-operator',
    setup: () => (manager) => {
      manager.log.info(FIXTURE_STARTED, {
        identity: manager.config.leaderElection.identity,
        pid: process.pid,
      });
      logLeaseReads(manager);
      registerFixtureControllers(manager);
    },
  });
}
