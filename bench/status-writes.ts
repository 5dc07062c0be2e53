// What a status write costs the API server, by strategy: the JSON Patch that replaces the whole
// status (replaceWholeStatus, the BasicDeployment and BasicReplicaSet controllers' hot path) against
// server-side apply of owned fields (applyOwnedFields, the Machine's two controllers). Same objects,
// same statuses, rounds alternating between the two so drift in the machine's load hits both.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { clusterDir } from '../e2e/providers/local/paths.ts';
import { testClient, testCluster } from '../e2e/support/cluster.ts';
import { installCrds } from '../e2e/support/crds.ts';
import { createNamespace, deleteNamespace } from '../e2e/support/namespace.ts';
import { BASIC_REPLICA_SET, type BasicReplicaSet, type BasicReplicaSetStatus } from '../src/apis/index.ts';
import { setCondition } from '../src/runtime/write/conditions.ts';
import {
  applyOwnedFields,
  replaceWholeStatus,
  type StatusStrategy,
} from '../src/runtime/write/status-strategy.ts';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '4' },
    inflight: { type: 'string', default: '8' },
  },
});
const OBJECTS = Number(values.objects);
const ROUNDS = Number(values.rounds);
const IN_FLIGHT = Number(values.inflight);
const log = (msg: string) => process.stderr.write(`[bench:status] ${msg}\n`);

const info = await testCluster();
if (info.provider !== 'local')
  throw new Error('bench:status reads control-plane CPU from /proc: local provider only');
await installCrds();
const client = await testClient();
const ns = await createNamespace(client, 'bench-status');

function cpuTicks(component: string): number {
  const pid = Number(readFileSync(join(clusterDir(), 'pids', `${component}.pid`), 'utf8').trim());
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(stat[11]) + Number(stat[12]);
}

async function inParallel<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

const status = (round: number): BasicReplicaSetStatus => ({
  replicas: round,
  activeReplicas: round,
  readyReplicas: round,
  availableReplicas: round,
  observedGeneration: 1,
  conditions: setCondition(
    undefined,
    {
      type: 'Ready',
      status: round % 2 ? 'True' : 'False',
      reason: `Round${round}`,
      message: `round ${round}`,
    },
    new Date(),
  ),
});

interface Figures {
  writes: number;
  seconds: number;
  apiserverTicks: number;
  etcdTicks: number;
}
const totals = new Map<string, Figures>();

try {
  const names = Array.from({ length: OBJECTS }, (_, i) => `s${i}`);
  const objects = new Map<string, BasicReplicaSet>();
  await inParallel(names, IN_FLIGHT, async (name) => {
    const created = await client.create<BasicReplicaSet>(BASIC_REPLICA_SET, {
      apiVersion: BASIC_REPLICA_SET.apiVersion,
      kind: BASIC_REPLICA_SET.kind,
      metadata: { name, namespace: ns },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      },
    });
    objects.set(name, created);
  });
  const strategies: [string, StatusStrategy][] = [
    ['json patch (replace)', replaceWholeStatus],
    ['server-side apply', applyOwnedFields('bench')],
  ];
  let round = 0;
  for (let r = 0; r < ROUNDS; r++) {
    for (const [label, strategy] of r % 2 ? [...strategies].reverse() : strategies) {
      round++;
      const next = status(round);
      const before = { api: cpuTicks('kube-apiserver'), etcd: cpuTicks('etcd'), at: performance.now() };
      await inParallel(names, IN_FLIGHT, (name) => {
        const obj = objects.get(name)!;
        const target = { namespace: ns, name, uid: obj.metadata.uid };
        return strategy.send(client, BASIC_REPLICA_SET, target, next, new AbortController().signal);
      });
      const figures = totals.get(label) ?? { writes: 0, seconds: 0, apiserverTicks: 0, etcdTicks: 0 };
      figures.writes += names.length;
      figures.seconds += (performance.now() - before.at) / 1000;
      figures.apiserverTicks += cpuTicks('kube-apiserver') - before.api;
      figures.etcdTicks += cpuTicks('etcd') - before.etcd;
      totals.set(label, figures);
      log(`round ${round}: ${label} done`);
    }
  }
} finally {
  await deleteNamespace(client, ns);
}

const TICK_MS = 10; // USER_HZ = 100
const rows = [...totals].map(([label, f]) => ({
  label,
  writesPerSecond: f.writes / f.seconds,
  apiserverMsPerWrite: (f.apiserverTicks * TICK_MS) / f.writes,
  etcdMsPerWrite: (f.etcdTicks * TICK_MS) / f.writes,
}));
process.stdout.write(
  `status writes: ${OBJECTS} BasicReplicaSets x ${ROUNDS} rounds per strategy, ${IN_FLIGHT} in flight\n`,
);
for (const row of rows) {
  process.stdout.write(
    `  ${row.label.padEnd(22)} ${row.writesPerSecond.toFixed(0).padStart(5)} writes/s   kube-apiserver ${row.apiserverMsPerWrite.toFixed(2)} ms CPU/write   etcd ${row.etcdMsPerWrite.toFixed(2)} ms CPU/write\n`,
  );
}
const [patch, apply] = rows;
if (patch && apply) {
  process.stdout.write(
    `  apply / patch: time ${(patch.writesPerSecond / apply.writesPerSecond).toFixed(2)}, kube-apiserver CPU ${(apply.apiserverMsPerWrite / patch.apiserverMsPerWrite).toFixed(2)}\n`,
  );
}
