// What one cached pod costs the operator's heap, by what the cache keeps of it: the pod whole, without
// managedFields, the operator's kept fields (what its controllers read, merged in
// src/controllers/cache-transforms.ts) without and with its string pool. N pods shaped like the
// kwok pods of a BasicDeployment (bench/kwok-pod.json, taken from the local cluster with `kubectl
// get pod -o json --show-managed-fields`), 10 per set, created over 75 s, each parsed from its own
// JSON as the reflector parses a watch event, and filed in a real Store. Each variant runs in a
// child process of its own, so one heap never holds another's.
//
//   npm run bench:cache -- --pods 10000
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import { mergedCacheShapes } from '../src/controllers/cache-transforms.ts';
import { CONTROLLERS } from '../src/controllers/index.ts';
import { keepFields, type Shape, StringPool } from '../src/runtime/cache/keep-fields.ts';
import { stripManagedFields } from '../src/runtime/cache/reflector.ts';
import { Store } from '../src/runtime/cache/store.ts';

const { values } = parseArgs({
  options: {
    pods: { type: 'string', default: '10000' },
    variant: { type: 'string' },
  },
});
const N = Number(values.pods);

/** What the operator's cache keeps of a pod without a PodMachine's label: a BasicDeployment's pod. */
const POD_FIELDS = mergedCacheShapes(CONTROLLERS).pods;

const VARIANTS: Record<string, (pod: V1Pod) => V1Pod> = {
  whole: (pod) => pod,
  'strip managedFields': stripManagedFields,
  'kept fields': keepFields(unshared(POD_FIELDS), new StringPool()),
  'kept fields + string pool': keepFields(POD_FIELDS, new StringPool()),
};

/** The same shape with every 'shared' turned into true: no string pool. */
function unshared<T>(shape: Shape<T>): Shape<T> {
  const walk = (value: unknown): unknown =>
    value === 'shared'
      ? true
      : typeof value === 'object' && value !== null
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]))
        : value;
  return walk(shape) as Shape<T>;
}

const SUFFIX_CHARS = 'bcdfghjklmnpqrstvwxz2456789';
const suffix = (length: number) =>
  [...randomBytes(length)].map((b) => SUFFIX_CHARS[b % SUFFIX_CHARS.length]).join('');
const rfc3339 = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;

/** N pods as JSON, one string each: `template` with the names, uids, times and IPs of pod i. */
function podJson(template: V1Pod): string[] {
  const start = Date.parse('2026-01-01T12:00:00Z');
  const out: string[] = [];
  let set = { name: '', uid: '', hash: '', app: '' };
  for (let i = 0; i < N; i++) {
    if (i % 10 === 0) {
      const hash = suffix(10);
      const app = `d-${i / 10}`;
      set = { name: `${app}-${hash}`, uid: randomUUID(), hash, app };
    }
    const pod = structuredClone(template);
    const created = rfc3339(start + Math.floor((i * 75_000) / N));
    const ready = rfc3339(start + Math.floor((i * 75_000) / N) + 1000);
    const meta = pod.metadata!;
    meta.name = `${set.name}-${suffix(5)}`;
    meta.generateName = `${set.name}-`;
    meta.namespace = 'bench';
    meta.uid = randomUUID();
    meta.resourceVersion = String(100_000 + i * 5);
    meta.creationTimestamp = created as unknown as Date;
    meta.labels = { ...meta.labels, app: set.app, 'apps.basicoperator.dev/pod-template-hash': set.hash };
    meta.ownerReferences = [{ ...meta.ownerReferences![0]!, name: set.name, uid: set.uid }];
    for (const entry of meta.managedFields ?? []) entry.time = ready as unknown as Date;
    const spec = pod.spec!;
    spec.nodeName = `kwok-node-${i % 4}`;
    const volume = `kube-api-access-${suffix(5)}`;
    spec.volumes![0]!.name = volume;
    spec.containers[0]!.volumeMounts![0]!.name = volume;
    const status = pod.status!;
    for (const condition of status.conditions ?? []) condition.lastTransitionTime = ready as unknown as Date;
    status.startTime = created as unknown as Date;
    status.containerStatuses![0]!.state = { running: { startedAt: ready as unknown as Date } };
    const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    status.podIP = ip;
    status.podIPs = [{ ip }];
    out.push(JSON.stringify(pod));
  }
  return out;
}

function heapUsed(): number {
  globalThis.gc!();
  globalThis.gc!();
  return process.memoryUsage().heapUsed;
}

function measure(variant: string): number {
  const transform = VARIANTS[variant];
  if (!transform) throw new Error(`no variant ${variant}`);
  const template = JSON.parse(readFileSync(new URL('./kwok-pod.json', import.meta.url), 'utf8')) as V1Pod;
  const json = podJson(template);
  const store = new Store<V1Pod>();
  const before = heapUsed();
  for (const text of json) store.upsert(transform(JSON.parse(text) as V1Pod));
  const after = heapUsed();
  // Both still alive here, so neither the JSON nor the store is freed before `after`.
  if (store.list().length !== N || json.length !== N) throw new Error('lost pods');
  return (after - before) / N;
}

if (values.variant !== undefined) {
  process.stdout.write(`${measure(values.variant)}\n`);
} else {
  if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc');
  console.log(`${N} pods, heap per cached pod (after gc), each variant in a fresh process:`);
  const perPod: Record<string, number> = {};
  for (const variant of Object.keys(VARIANTS)) {
    const out = execFileSync(
      process.execPath,
      ['--expose-gc', new URL(import.meta.url).pathname, '--pods', String(N), '--variant', variant],
      { encoding: 'utf8' },
    );
    perPod[variant] = Number(out.trim());
  }
  const whole = perPod.whole ?? 1;
  for (const [variant, bytes] of Object.entries(perPod)) {
    const share = `${Math.round((100 * bytes) / whole)}%`;
    console.log(
      `${variant.padEnd(28)} ${Math.round(bytes).toString().padStart(6)} B/pod  ${share.padStart(4)}  ${((bytes * N) / 2 ** 20).toFixed(1).padStart(6)} MiB`,
    );
  }
}
