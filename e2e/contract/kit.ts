// The conformance kit of the Machine infrastructure contract v1 (docs/contract-test.md): runs every
// check of report.ts against a provider kind whose controller is running, and returns the results.
import { randomBytes } from 'node:crypto';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import {
  type InfrastructureVolume,
  isViolation,
  readInfrastructure,
  STOP_REQUESTED_ANNOTATION,
  type UnstructuredObject,
} from '../../src/apis/infra/contract/index.ts';
import { isNotFound } from '../../src/runtime/client/errors.ts';
import { KubeClient } from '../../src/runtime/client/kube-client.ts';
import { loadKubeConfig } from '../../src/runtime/client/kubeconfig.ts';
import type { KubeObject } from '../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType, resourceOf } from '../../src/runtime/client/resource.ts';
import { errorMessage } from '../../src/runtime/log.ts';
import { adopt } from '../../src/runtime/write/owner-refs.ts';
import { type ContractTestOptions, type KindAndGroup, parseKind } from './args.ts';
import {
  claimNamesOf,
  claimsNotKept,
  describeClaimsInUse,
  podsUsingClaims,
  volumesDropped,
} from './claims.ts';
import {
  CRD_TYPE,
  checkContractLabel,
  checkCrdFound,
  checkNamespaced,
  checkStatusSubresource,
  chooseVersion,
} from './crd.ts';
import { followObject } from './follow.ts';
import { CHECK_NAMES, type CheckName, type CheckResult, fail, pass, skip } from './report.ts';
import { objectFromSample, type ProviderObject, readSample } from './sample.ts';
import {
  checkNoFailure,
  checkReadyConditionCurrent,
  checkWellTyped,
  describeStatus,
  readiness,
} from './status.ts';

export type { ContractTestOptions } from './args.ts';
export type { CheckResult } from './report.ts';

export interface ContractTestHooks {
  /** Told each result as soon as its check has run (the CLI prints it then). */
  onResult?: (result: CheckResult) => void;
  /** What the kit is doing or waiting for, for people watching a long run. */
  onProgress?: (line: string) => void;
}

/** What the checks share: the cluster, the kind under test and the object the kit made. */
interface Run {
  client: KubeClient;
  target: KindAndGroup;
  type: ResourceType<ProviderObject>;
  namespace: string;
  name: string;
  timeoutMs: number;
  settleMs: number;
  progress: (line: string) => void;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const what = (run: Run) => `${run.target.kind} ${run.namespace}/${run.name}`;

/**
 * Runs the kit against `options.kind`. Bad options (a kind that is not `<Kind>.<group>`, an unreadable
 * or wrong sample, a namespace that does not exist, no kubeconfig) throw before any check runs;
 * everything the provider does or fails to do is a result. The objects the kit made are deleted at
 * the end, and so is its namespace if it made one.
 */
export async function runContractTest(
  options: ContractTestOptions & ContractTestHooks,
): Promise<CheckResult[]> {
  const target = parseKind(options.kind);
  if ('error' in target) throw new Error(target.error);
  const sample = options.sample ? await readSample(options.sample, target) : undefined;
  const client = new KubeClient(await loadKubeConfig(options.kubeconfig), {
    userAgent: 'basic-operator-contract-test',
  });
  if (options.namespace) await mustExist(client, options.namespace);

  const results: CheckResult[] = [];
  const record = (result: CheckResult) => {
    results.push(result);
    options.onResult?.(result);
    return result;
  };
  const skipRest = (reason: string) => {
    const done = new Set(results.map((r) => r.check));
    for (const check of CHECK_NAMES) if (!done.has(check)) record(skip(check, reason));
    return results;
  };
  const progress = options.onProgress ?? (() => undefined);

  const crds = await client.list(CRD_TYPE).catch((err: unknown) => {
    throw new Error(`cannot list CustomResourceDefinitions: ${errorMessage(err)}`);
  });
  const found = checkCrdFound(crds.items, target);
  record(found.result);
  const crd = found.crd;
  if (!crd) return skipRest('needs crd-found');
  if (record(checkNamespaced(crd)).status === 'fail') return skipRest('needs crd-namespaced');
  const chosen = chooseVersion(crd, options.version);
  if ('problem' in chosen) {
    record(fail('crd-contract-label', chosen.problem));
    return skipRest('needs a served version to test');
  }
  const version = chosen.version;
  record(checkContractLabel(crd, version));
  record(checkStatusSubresource(crd, version));

  const type = resourceOf<ProviderObject>()({
    group: target.group,
    version,
    kind: target.kind,
    plural: crd.spec.names.plural,
    namespaced: true,
  });
  const ownNamespace = options.namespace === undefined;
  const namespace = options.namespace ?? `contract-test-${randomBytes(3).toString('hex')}`;
  const run: Run = {
    client,
    target,
    type,
    namespace,
    name: `contract-test-${randomBytes(3).toString('hex')}`,
    timeoutMs: options.timeoutSeconds * 1000,
    settleMs: options.settleSeconds * 1000,
    progress,
  };
  if (ownNamespace) await createNamespace(client, namespace);
  try {
    const created = await createObject(
      run,
      objectFromSample(sample, target, version, namespace, run.name),
      options.sample ?? 'an empty spec (no --sample)',
    );
    if (record(created).status === 'fail') return skipRest('needs object-created');
    await objectChecks(run, record);
    return skipRest('not run');
  } finally {
    await cleanUp(run, ownNamespace);
  }
}

async function mustExist(client: KubeClient, namespace: string): Promise<void> {
  try {
    await client.get(CoreTypes.Namespace, undefined, namespace);
  } catch (err) {
    if (isNotFound(err)) throw new Error(`--namespace ${namespace}: no such namespace`);
    throw err;
  }
}

async function createNamespace(client: KubeClient, namespace: string): Promise<void> {
  try {
    await client.create(CoreTypes.Namespace, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace, labels: { 'infra.basicoperator.dev/contract-test': 'true' } },
    });
  } catch (err) {
    throw new Error(
      `cannot create the namespace ${namespace} (or give one with --namespace): ${errorMessage(err)}`,
    );
  }
}

async function createObject(run: Run, obj: ProviderObject, from: string): Promise<CheckResult> {
  try {
    await run.client.create(run.type, obj);
    return pass('object-created', `${what(run)} (${obj.apiVersion}) from ${from}`);
  } catch (err) {
    return fail(
      'object-created',
      `the API server refused ${what(run)} made from ${from}: ${errorMessage(err)}`,
    );
  }
}

/** Readiness and the fields read on the ready object, the owner, the deletion handshake, deletion. */
async function objectChecks(run: Run, record: (result: CheckResult) => CheckResult): Promise<void> {
  const ready = await becomesReady(run);
  record(ready.result);
  const isReady = ready.result.status === 'pass';
  const needsReady = (check: CheckName) => skip(check, 'needs becomes-ready');
  record(
    isReady && ready.last ? checkReadyConditionCurrent(ready.last) : needsReady('ready-condition-current'),
  );
  record(ready.last ? checkNoFailure(ready.last) : skip('no-failure', 'the object is gone'));
  record(ready.last ? checkWellTyped(ready.last) : skip('status-well-typed', 'the object is gone'));
  const readyVolumes = ready.last ? volumesOf(ready.last) : undefined;
  record(isReady ? await volumeClaimsExist(run, readyVolumes) : needsReady('volume-claims-exist'));
  record(isReady ? await ownerTolerated(run) : needsReady('owner-tolerated'));

  // The deletion handshake runs whether or not the object got ready: a Machine may be deleted any time.
  const stop = await stopsOnRequest(run, readyVolumes);
  for (const result of stop.results) record(result);
  const stopped = stop.results[0]?.status === 'pass';
  record(
    stopped ? await staysStopped(run, stop.claimNames) : skip('stays-stopped', 'needs stops-on-request'),
  );
  record(await deleted(run));
}

function volumesOf(obj: UnstructuredObject): InfrastructureVolume[] | undefined {
  const view = readInfrastructure(obj);
  return isViolation(view) ? undefined : view.volumes;
}

async function becomesReady(run: Run): Promise<{ result: CheckResult; last?: ProviderObject }> {
  run.progress(`waiting up to ${seconds(run.timeoutMs)} for ${what(run)} to be ready`);
  const followed = await followObject(
    run.client,
    run.type,
    run.namespace,
    run.name,
    (obj) => {
      const state = readiness(obj);
      return state.state === 'waiting' ? undefined : { state, obj };
    },
    run.timeoutMs,
  );
  if ('timedOut' in followed) {
    return {
      result: fail(
        'becomes-ready',
        `not ready after ${seconds(run.timeoutMs)} (--timeout); last seen: ${describeStatus(followed.last)}`,
      ),
      last: followed.last,
    };
  }
  const { state, obj: last } = followed.verdict;
  switch (state.state) {
    case 'ready':
      return {
        result: pass('becomes-ready', `ready after ${seconds(followed.elapsedMs)}: ${describeStatus(last)}`),
        last,
      };
    case 'broken':
      return {
        result: fail(
          'becomes-ready',
          `cannot read readiness, the status breaks the contract: ${state.violation}`,
        ),
        last,
      };
    case 'failed':
      return {
        result: fail(
          'becomes-ready',
          `a terminal failure was reported instead: ${state.reason}: ${state.message}`,
        ),
        last,
      };
    case 'gone':
      return {
        result: fail('becomes-ready', 'the object disappeared while the kit waited for it to be ready'),
      };
  }
}

async function listClaims(run: Run): Promise<V1PersistentVolumeClaim[]> {
  return (await run.client.list(CoreTypes.PersistentVolumeClaim, { namespace: run.namespace })).items;
}

async function listPods(run: Run): Promise<V1Pod[]> {
  return (await run.client.list(CoreTypes.Pod, { namespace: run.namespace })).items;
}

async function volumeClaimsExist(
  run: Run,
  volumes: InfrastructureVolume[] | undefined,
): Promise<CheckResult> {
  if (!volumes || volumes.length === 0) {
    return pass(
      'volume-claims-exist',
      'no status.volumes: the provider reports no volumes, so a Machine on it has nothing to back up',
    );
  }
  const claims = new Map((await listClaims(run)).map((c) => [c.metadata?.name ?? '', c]));
  const problems: string[] = [];
  for (const v of volumes) {
    const claim = claims.get(v.claimName);
    if (!claim) problems.push(`volume ${v.name}: claim ${v.claimName} does not exist in ${run.namespace}`);
    else if (claim.metadata?.deletionTimestamp != null) {
      problems.push(`volume ${v.name}: claim ${v.claimName} is being deleted`);
    }
  }
  return problems.length > 0
    ? fail('volume-claims-exist', problems.join('; '))
    : pass('volume-claims-exist', volumes.map((v) => `${v.name}→${v.claimName}`).join(', '));
}

/**
 * Someone else (here a ConfigMap, as the Machine controller would be) becomes the object's
 * controller owner; the reference must stay through the settle time and the object stay ready.
 */
async function ownerTolerated(run: Run): Promise<CheckResult> {
  let ownerUid: string;
  try {
    const owner = await run.client.create<KubeObject>(CoreTypes.ConfigMap, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `${run.name}-owner`, namespace: run.namespace },
    });
    ownerUid = owner.metadata?.uid ?? '';
    const current = await run.client.get(run.type, run.namespace, run.name);
    await adopt(run.client, run.type, current, owner, CoreTypes.ConfigMap, { attempts: 5 });
  } catch (err) {
    return fail(
      'owner-tolerated',
      `could not make a ConfigMap the object's controller owner: ${errorMessage(err)}`,
    );
  }
  run.progress(`watching ${what(run)} for ${seconds(run.settleMs)} with a controller owner added`);
  const hasOwner = (obj: ProviderObject) =>
    obj.metadata?.ownerReferences?.some((ref) => ref.uid === ownerUid && ref.controller === true) ?? false;
  const followed = await followObject(
    run.client,
    run.type,
    run.namespace,
    run.name,
    (obj) =>
      !obj
        ? 'the object disappeared'
        : hasOwner(obj)
          ? undefined
          : 'the provider removed the controller ownerReference the kit added',
    run.settleMs,
  );
  if (!('timedOut' in followed))
    return fail('owner-tolerated', `${followed.verdict} (${seconds(followed.elapsedMs)} after adding it)`);
  const state = readiness(followed.last);
  return state.state === 'ready'
    ? pass('owner-tolerated', `ownerReference kept and still ready after ${seconds(run.settleMs)}`)
    : fail(
        'owner-tolerated',
        `not ready any more ${seconds(run.settleMs)} after a controller owner was added: ${describeStatus(followed.last)}`,
      );
}

/**
 * Sets the stop request and waits for `status.stopped: true`; at that moment lists the pods and
 * claims of the namespace: results for stops-on-request, compute-stopped and claims-kept.
 */
async function stopsOnRequest(
  run: Run,
  readyVolumes: InfrastructureVolume[] | undefined,
): Promise<{ results: CheckResult[]; claimNames: Set<string> }> {
  const notStopped = (why: string) => ({
    results: [
      fail('stops-on-request', why),
      skip('compute-stopped', 'needs stops-on-request'),
      skip('claims-kept', 'needs stops-on-request'),
    ],
    claimNames: new Set<string>(),
  });
  try {
    const before = await run.client.get(run.type, run.namespace, run.name);
    const view = readInfrastructure(before);
    if (!isViolation(view) && view.stopped) {
      return notStopped(
        'status.stopped was true before any stop request: the contract sets it only after one',
      );
    }
    await run.client.patch(run.type, {
      namespace: run.namespace,
      name: run.name,
      patchType: 'merge',
      body: { metadata: { annotations: { [STOP_REQUESTED_ANNOTATION]: 'true' } } },
    });
  } catch (err) {
    return notStopped(`could not request the stop (${STOP_REQUESTED_ANNOTATION}): ${errorMessage(err)}`);
  }
  run.progress(`waiting up to ${seconds(run.timeoutMs)} for ${what(run)} to report status.stopped: true`);
  const followed = await followObject(
    run.client,
    run.type,
    run.namespace,
    run.name,
    (obj) => {
      if (!obj) return { obj, problem: 'the object disappeared before it reported stopped' };
      const view = readInfrastructure(obj);
      if (isViolation(view)) {
        return {
          obj,
          problem: `cannot read status.stopped, the status breaks the contract: ${view.violation}`,
        };
      }
      return view.stopped ? { obj, problem: undefined } : undefined;
    },
    run.timeoutMs,
  );
  if ('timedOut' in followed) {
    return notStopped(
      `status.stopped did not become true within ${seconds(run.timeoutMs)} (--timeout) of the stop request; last seen: ${describeStatus(followed.last)}`,
    );
  }
  const { obj, problem } = followed.verdict;
  if (problem || !obj) return notStopped(problem ?? 'the object is gone');
  // At the moment stopped is reported: nothing may run with the claims, and every claim is kept.
  const [pods, claims] = await Promise.all([listPods(run), listClaims(run)]);
  const stoppedVolumes = volumesOf(obj);
  const claimNames = claimNamesOf(readyVolumes, stoppedVolumes);
  const results = [pass('stops-on-request', `stopped ${seconds(followed.elapsedMs)} after the stop request`)];
  const inUse = podsUsingClaims(pods, claimNames);
  results.push(
    claimNames.size === 0
      ? pass('compute-stopped', 'no claims reported, so no pod to look for')
      : inUse.length > 0
        ? fail('compute-stopped', `stopped was reported while ${describeClaimsInUse(inUse)}`)
        : pass('compute-stopped', `no pod mounts ${[...claimNames].sort().join(', ')}`),
  );
  const problems = [
    ...claimsNotKept(claimNames, claims),
    ...volumesDropped(readyVolumes ?? [], stoppedVolumes ?? []),
  ];
  results.push(
    claimNames.size === 0
      ? pass('claims-kept', 'no claims reported')
      : problems.length > 0
        ? fail('claims-kept', `when stopped was reported: ${problems.join('; ')}`)
        : pass('claims-kept', `${[...claimNames].sort().join(', ')} kept and still listed in status.volumes`),
  );
  return { results, claimNames };
}

/** A stop request is final: stopped stays true, no pod comes back to the claims, the claims stay. */
async function staysStopped(run: Run, claimNames: Set<string>): Promise<CheckResult> {
  run.progress(`watching ${what(run)} for ${seconds(run.settleMs)} after it reported stopped`);
  const followed = await followObject(
    run.client,
    run.type,
    run.namespace,
    run.name,
    (obj) => {
      if (!obj) return 'the object disappeared';
      const view = readInfrastructure(obj);
      if (isViolation(view))
        return `cannot read status.stopped, the status breaks the contract: ${view.violation}`;
      return view.stopped ? undefined : `status.stopped went back: ${describeStatus(obj)}`;
    },
    run.settleMs,
  );
  if (!('timedOut' in followed)) {
    return fail('stays-stopped', `${followed.verdict} (${seconds(followed.elapsedMs)} into the settle time)`);
  }
  const [pods, claims] = await Promise.all([listPods(run), listClaims(run)]);
  const inUse = podsUsingClaims(pods, claimNames);
  const problems = [
    ...(inUse.length > 0 ? [`compute started again: ${describeClaimsInUse(inUse)}`] : []),
    ...claimsNotKept(claimNames, claims),
  ];
  return problems.length > 0
    ? fail('stays-stopped', `${seconds(run.settleMs)} after stopped was reported: ${problems.join('; ')}`)
    : pass('stays-stopped', `stopped held for ${seconds(run.settleMs)}`);
}

/**
 * A foreground deletion of a kind kube-controller-manager's garbage collector has not seen yet waits
 * for its discovery resync (every 30 s), so the kit gives a delete at least this long.
 */
const MIN_DELETE_WAIT_MS = 60_000;

/** Deleted as the Machine controller deletes it (foreground), the object must be gone in time. */
async function deleted(run: Run): Promise<CheckResult> {
  const waitMs = Math.max(run.timeoutMs, MIN_DELETE_WAIT_MS);
  try {
    await run.client.delete(run.type, run.namespace, run.name, { propagationPolicy: 'Foreground' });
  } catch (err) {
    return fail(
      'deleted',
      isNotFound(err)
        ? 'the object was gone before the kit deleted it: a provider must not delete its own object'
        : `could not delete the object: ${errorMessage(err)}`,
    );
  }
  run.progress(`waiting up to ${seconds(waitMs)} for ${what(run)} to be gone`);
  const followed = await followObject(
    run.client,
    run.type,
    run.namespace,
    run.name,
    (obj) => (obj ? undefined : true),
    waitMs,
  );
  if (!('timedOut' in followed))
    return pass('deleted', `gone ${seconds(followed.elapsedMs)} after the delete`);
  const finalizers = followed.last?.metadata?.finalizers ?? [];
  return fail(
    'deleted',
    `still there ${seconds(waitMs)} (--timeout, at least ${seconds(MIN_DELETE_WAIT_MS)}) after a foreground delete; finalizers: ${finalizers.join(', ') || 'none'}`,
  );
}

/** Best effort: what the kit made goes, whatever failed. */
async function cleanUp(run: Run, ownNamespace: boolean): Promise<void> {
  const quietly = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      () => undefined,
    );
  await quietly(run.client.delete(run.type, run.namespace, run.name, { propagationPolicy: 'Background' }));
  await quietly(run.client.delete(CoreTypes.ConfigMap, run.namespace, `${run.name}-owner`));
  if (ownNamespace) await quietly(run.client.delete(CoreTypes.Namespace, undefined, run.namespace));
}
