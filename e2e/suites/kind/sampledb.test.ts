import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { EventsV1Event, V1Namespace, V1Pod } from '@kubernetes/client-node';
import type { Condition, Machine, MachineSpec, PodMachine, VolumeBackup } from '../../../src/apis/index.ts';
import { run } from '../../providers/exec.ts';
import {
  POSTGRES_IMAGE,
  POSTGRES_MOUNT,
  POSTGRES_PGDATA,
  POSTGRES_UID,
} from '../../providers/kind/images/postgres.ts';
import {
  GiveUp,
  KIND_ONLY,
  KindRelease,
  check as kindCheck,
  note,
  restrictedPod,
  runPod,
  seconds,
  waitForMachineReady,
} from '../support/kind.ts';

/**
 * The SampleDB round trip: a real database as a Machine, in a workload namespace that enforces Pod
 * Security `restricted`. PostgreSQL 15 (the image e2e/providers/kind/images/postgres.ts builds from
 * Debian's packages) runs as uid/gid 999 with its password from a Secret, resources set and a
 * readiness probe (`pg_isready`), so the Machine is Ready only once the database accepts
 * connections. A table of 5,000 rows is written; the Machine is deleted (backed up first) and a new
 * one restores the volume: it becomes Ready only if PostgreSQL accepts the restored data folder
 * (owned by 999, mode 0700, else it refuses to start), and the table reads back with the same
 * checksum, and the same bytes of `pg_dump --data-only`. Beside it: a Machine whose probe never
 * passes stays not Ready and says why without a hot loop, and a Machine asking for a privileged pod
 * is refused with the API server's words. Times (to Ready, backup, restore) are printed.
 */

const TIMEOUT_MS = 240_000;
const KUBECTL_BASIC = fileURLToPath(new URL('../../../bin/kubectl-basic.js', import.meta.url));
const ROWS = 5_000;
const PSA_REFUSAL = /violates PodSecurity "restricted:latest"/;

const SQL_WRITE = [
  'CREATE TABLE sample (id integer PRIMARY KEY, payload text NOT NULL)',
  `INSERT INTO sample SELECT i, md5(i::text) FROM generate_series(1, ${ROWS}) AS i`,
].join('; ');
/** Row count and an md5 of every row in id order. */
const SQL_CHECKSUM =
  "SELECT count(*) || ' ' || md5(string_agg(id || ':' || payload, ',' ORDER BY id)) FROM sample";

describe('SampleDB: PostgreSQL as a Machine survives delete and restore under restricted (kind)', {
  skip: KIND_ONLY,
}, () => {
  let release: KindRelease;
  let ns: string;
  const secret = 'sampledb';
  const password = randomBytes(12).toString('hex');
  let checksum = '';
  let dumpSum = '';
  let backupName = '';

  before(async () => {
    release = await KindRelease.create({ topic: 'sampledb', podSecurity: 'restricted' });
    await release.install();
    ns = release.workloadNamespace;
    await release.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: secret, namespace: ns },
      stringData: { password },
    });
  });

  after(async () => {
    await release?.cleanup();
  });

  const check = (name: string, timeoutMs: number, body: () => Promise<void>) =>
    kindCheck(() => release, name, timeoutMs, body);

  /** psql in the Machine's pod, over the local socket (trust), one value per line. */
  const psql = (pod: string, sql: string) =>
    release.kubectlOk([
      'exec',
      pod,
      '-n',
      ns,
      '-c',
      'machine',
      '--',
      'psql',
      '-U',
      'postgres',
      '-X',
      '-q',
      '-A',
      '-t',
      '-v',
      'ON_ERROR_STOP=1',
      '-c',
      sql,
    ]);
  /** sha256 of `pg_dump --data-only -t sample` in the Machine's pod. */
  const dump = async (pod: string) =>
    (
      await release.kubectlOk([
        'exec',
        pod,
        '-n',
        ns,
        '-c',
        'machine',
        '--',
        'sh',
        '-c',
        // pg_dump brackets its output with \restrict and \unrestrict lines of a random key.
        "set -o pipefail; pg_dump -U postgres --data-only -t sample | grep -Ev '^\\\\(un)?restrict ' | sha256sum",
      ])
    ).trim();

  check('the image runs as a plain pod there: initdb, then pg_isready answers', TIMEOUT_MS, async () => {
    const labels = (await release.tools.getJson<V1Namespace>([`namespace/${ns}`])).metadata?.labels ?? {};
    assert.equal(labels['pod-security.kubernetes.io/enforce'], 'restricted');
    // An emptyDir stands in for the volume; the probe loop has its own deadline.
    const pod = restrictedPod(
      'postgres-smoke',
      ns,
      POSTGRES_IMAGE,
      [
        `export POSTGRES_PASSWORD=smoke PGDATA=${POSTGRES_PGDATA}`,
        'postgres-entrypoint & pid=$!',
        'i=0; until pg_isready -h 127.0.0.1 -U postgres; do i=$((i+1)); [ $i -lt 60 ] || exit 1; sleep 1; done',
        `stat -c '%u:%g %a' "$PGDATA"`,
        'PGPASSWORD=smoke psql -h 127.0.0.1 -U postgres -X -A -t -c "select current_user"',
        'kill -INT $pid; wait $pid',
      ].join('\n'),
    );
    const spec = pod.spec;
    assert.ok(spec);
    spec.securityContext = {
      ...spec.securityContext,
      runAsUser: POSTGRES_UID,
      runAsGroup: POSTGRES_UID,
      fsGroup: POSTGRES_UID,
    };
    const container = spec.containers[0];
    assert.ok(container);
    container.securityContext = { ...container.securityContext, readOnlyRootFilesystem: false };
    container.volumeMounts = [{ name: 'data', mountPath: POSTGRES_MOUNT }];
    spec.volumes = [{ name: 'data', emptyDir: {} }];
    const log = await runPod(release, pod, 120_000);
    assert.match(log, /127\.0\.0\.1:5432 - accepting connections/);
    assert.match(log, new RegExp(`^${POSTGRES_UID}:${POSTGRES_UID} 700$`, 'm'), 'PGDATA is 999:999, 0700');
    assert.match(log, /^postgres$/m, 'the password from the environment authenticates (scram-sha-256)');
  });

  check(
    'a PostgreSQL Machine becomes Ready when pg_isready passes; a table is written',
    TIMEOUT_MS,
    async () => {
      const started = Date.now();
      await release.apply(postgresMachine(ns, 'sampledb', secret));
      const m = await waitForMachineReady(release, 'sampledb', TIMEOUT_MS - 30_000);
      note(`sampledb: created to Ready (database accepting connections) in ${seconds(Date.now() - started)}`);
      const pod = await release.get<V1Pod>('pod/sampledb');
      const container = pod.spec?.containers[0];
      assert.equal(container?.readinessProbe?.exec?.command?.[0], 'pg_isready', 'the pod carries the probe');
      assert.equal(container?.resources?.limits?.memory, '512Mi', 'and the resources');
      assert.equal(pod.spec?.securityContext?.runAsUser, POSTGRES_UID);
      assert.equal(pod.spec?.automountServiceAccountToken, false, 'no API token in a database pod');
      assert.equal(pod.status?.qosClass, 'Burstable');
      assert.equal(condition(m, 'Ready')?.status, 'True');

      await psql('sampledb', SQL_WRITE);
      checksum = (await psql('sampledb', SQL_CHECKSUM)).trim();
      assert.match(checksum, new RegExp(`^${ROWS} [0-9a-f]{32}$`));
      dumpSum = await dump('sampledb');
      // The password really guards host connections: a wrong one is refused, the Secret's accepted.
      const wrong = await release.tools.kubectl([
        'exec',
        'sampledb',
        '-n',
        ns,
        '-c',
        'machine',
        '--',
        'env',
        'PGPASSWORD=wrong',
        'psql',
        '-h',
        '127.0.0.1',
        '-U',
        'postgres',
        '-c',
        'select 1',
      ]);
      assert.notEqual(wrong.code, 0);
      assert.match(wrong.stderr, /password authentication failed/);
      note(`sampledb: ${ROWS} rows written, checksum ${checksum}, dump ${dumpSum.slice(0, 16)}`);
    },
  );

  check('deleting the Machine backs the database up, then it is gone', TIMEOUT_MS, async () => {
    assert.ok(checksum, 'the table was written');
    const m = await release.get<Machine>('machine/sampledb');
    const started = Date.now();
    await release.kubectlOk(['delete', 'machine/sampledb', '-n', ns, '--wait=false']);
    const backup = await release.waitFor(
      'the VolumeBackup of machine/sampledb to complete',
      async () => {
        const mine = (await release.list<VolumeBackup>('volumebackups', ns)).find(
          (b) => b.spec.machineUID === m.metadata.uid,
        );
        if (mine?.status?.phase === 'Failed')
          throw new GiveUp(`the backup failed: ${JSON.stringify(mine.status)}`);
        return mine?.status?.phase === 'Completed' && mine;
      },
      { timeoutMs: TIMEOUT_MS - 30_000, refs: ['machine/sampledb', 'podmachine/sampledb', 'volumebackups'] },
    );
    const completed = Date.now() - started;
    backupName = backup.metadata.name ?? '';
    await release.waitFor(
      'machine/sampledb to be gone',
      async () => (await release.find<Machine>('machine/sampledb')) === undefined,
      { timeoutMs: 60_000, refs: ['machine/sampledb', 'podmachine/sampledb'] },
    );
    const manifest = backup.status?.volumes?.[0]?.manifest;
    note(
      `sampledb: backup ${backupName} Completed ${seconds(completed)} after the delete, Machine gone after ` +
        `${seconds(Date.now() - started)} (${manifest?.files ?? '?'} files, ${((manifest?.bytes ?? 0) / 1e6).toFixed(1)} MB)`,
    );
  });

  check('a Machine restored from the backup is Ready and reads the same table', TIMEOUT_MS, async () => {
    assert.ok(backupName, 'the backup completed');
    const started = Date.now();
    await release.apply(
      postgresMachine(ns, 'sampledb-restored', secret, { volumeBackup: backupName, volume: 'data' }),
    );
    await waitForMachineReady(release, 'sampledb-restored', TIMEOUT_MS - 30_000);
    note(
      `sampledb-restored: created to Ready (restore and database start) in ${seconds(Date.now() - started)}`,
    );
    const owner = await release.kubectlOk([
      'exec',
      'sampledb-restored',
      '-n',
      ns,
      '-c',
      'machine',
      '--',
      'stat',
      '-c',
      '%u:%g %a',
      POSTGRES_PGDATA,
    ]);
    assert.equal(
      owner.trim(),
      `${POSTGRES_UID}:${POSTGRES_UID} 700`,
      'the data folder kept its owner and mode',
    );
    assert.equal((await psql('sampledb-restored', SQL_CHECKSUM)).trim(), checksum, 'the same rows');
    assert.equal(await dump('sampledb-restored'), dumpSum, 'the same pg_dump bytes');
  });

  check(
    'a Machine whose readiness probe never passes stays not Ready, says why, and loops not',
    TIMEOUT_MS,
    async () => {
      await release.apply(
        postgresMachine(ns, 'never-ready', secret, undefined, {
          readinessProbe: { exec: { command: ['false'] }, periodSeconds: 2, failureThreshold: 1 },
        }),
      );
      // The pod runs (and PostgreSQL in it); only the probe fails.
      const m = await release.waitFor(
        'machine/never-ready: its pod running, the Machine not Ready (PodNotReady)',
        async () => {
          const m = await release.get<Machine>('machine/never-ready');
          return condition(m, 'Ready')?.reason === 'PodNotReady' && m;
        },
        { timeoutMs: TIMEOUT_MS - 90_000, refs: ['machine/never-ready', 'podmachine/never-ready'] },
      );
      const ready = condition(m, 'Ready');
      assert.equal(ready?.status, 'False');
      assert.equal(m.status?.ready, false);
      assert.match(ready?.message ?? '', /running but not ready/);
      assert.match(ready?.message ?? '', /readinessProbe/, 'the condition names the probe');
      assert.equal((await release.get<PodMachine>('podmachine/never-ready')).status?.phase, 'Running');
      // `kubectl basic why` names the failing probe, with the kubelet's Event.
      const why = await release.waitFor(
        '`kubectl basic why machine/never-ready` to name the failing readiness probe',
        async () => {
          const result = await run(
            process.execPath,
            [KUBECTL_BASIC, 'why', 'machine/never-ready', '-n', ns],
            {
              env: { KUBECONFIG: release.cluster.kubeconfig },
              timeoutMs: 30_000,
            },
          );
          return /readiness probe fails/.test(result.stdout) && result.stdout;
        },
        { timeoutMs: 60_000, refs: ['machine/never-ready'] },
      );
      note(`never-ready: kubectl basic why: ${why.split('\n')[0]}`);
      // No hot loop: over 20 s the Machine and its PodMachine are written a few times at most, and
      // the operator's Events about them stay few.
      const versions = new Set<string>();
      const eventsBefore = await operatorEvents(release, 'never-ready');
      const until = Date.now() + 20_000;
      while (Date.now() < until) {
        const [machine, podMachine] = await Promise.all([
          release.get<Machine>('machine/never-ready'),
          release.get<PodMachine>('podmachine/never-ready'),
        ]);
        versions.add(`m${machine.metadata.resourceVersion}`).add(`p${podMachine.metadata.resourceVersion}`);
        assert.equal(condition(machine, 'Ready')?.status, 'False', 'it never turns Ready');
        await new Promise((r) => setTimeout(r, 500));
      }
      const eventsAfter = await operatorEvents(release, 'never-ready');
      note(
        `never-ready: ${versions.size} resourceVersions of the Machine and PodMachine in 20 s; ` +
          `operator Events ${eventsBefore} -> ${eventsAfter}; Ready: ${ready?.reason}: ${ready?.message}`,
      );
      assert.ok(
        versions.size <= 6,
        `the Machine and PodMachine were written ${versions.size - 2} times in 20 s`,
      );
      assert.ok(
        eventsAfter - eventsBefore <= 3,
        `operator Events grew from ${eventsBefore} to ${eventsAfter}`,
      );
    },
  );

  check(
    'a Machine asking for a privileged pod gets PodRefused quoting the API server',
    TIMEOUT_MS,
    async () => {
      await release.apply(
        postgresMachine(ns, 'privileged', secret, undefined, { securityContext: { privileged: true } }),
      );
      const m = await release.waitFor(
        'machine/privileged to report PodRefused',
        async () => {
          const m = await release.get<Machine>('machine/privileged');
          return condition(m, 'Ready')?.reason === 'PodRefused' && m;
        },
        { timeoutMs: 90_000, refs: ['machine/privileged', 'podmachine/privileged'] },
      );
      const ready = condition(m, 'Ready');
      assert.equal(ready?.status, 'False');
      assert.match(ready?.message ?? '', PSA_REFUSAL);
      assert.match(ready?.message ?? '', /privileged/);
      assert.equal(m.status?.phase, 'Provisioning');
      assert.equal((await release.get<PodMachine>('podmachine/privileged')).status?.failureReason, undefined);
      assert.equal(await release.find<V1Pod>('pod/privileged'), undefined, 'no pod exists');
      const event = await release.waitFor(
        'a PodRefused Warning Event about podmachine/privileged',
        async () =>
          (await release.list<EventsV1Event>('events.events.k8s.io', ns)).find(
            (e) =>
              e.reason === 'PodRefused' &&
              e.regarding?.kind === 'PodMachine' &&
              e.regarding.name === 'privileged',
          ),
        { timeoutMs: 30_000 },
      );
      assert.equal(event.type, 'Warning');
      assert.match(event.note ?? '', PSA_REFUSAL);
      // Retried with backoff, not hot: the Event is one series, observed a few times.
      const before = await operatorEvents(release, 'privileged');
      await new Promise((r) => setTimeout(r, 20_000));
      const after = await operatorEvents(release, 'privileged');
      note(`privileged: operator Events ${before} -> ${after} in 20 s; Ready: ${ready?.message}`);
      assert.ok(after - before <= 5, `refusals were retried ${after - before} times in 20 s`);
    },
  );
});

function condition(object: { status?: { conditions?: Condition[] } }, type: string): Condition | undefined {
  return object.status?.conditions?.find((c) => c.type === type);
}

/** Occurrences of the operator's Events about the Machine or PodMachine `name` (series counted). */
async function operatorEvents(release: KindRelease, name: string): Promise<number> {
  const events = await release.list<EventsV1Event>('events.events.k8s.io', release.workloadNamespace);
  return events
    .filter((e) => e.reportingController === 'basic-operator' && e.regarding?.name === name)
    .reduce((sum, e) => sum + (e.series?.count ?? 1), 0);
}

function postgresMachine(
  namespace: string,
  name: string,
  secret: string,
  restoreFrom?: { volumeBackup: string; volume: string },
  overrides: Partial<MachineSpec> = {},
): Machine {
  return {
    apiVersion: 'infra.basicoperator.dev/v1alpha1',
    kind: 'Machine',
    metadata: { name, namespace },
    spec: {
      image: POSTGRES_IMAGE,
      env: [
        { name: 'POSTGRES_PASSWORD', valueFrom: { secretKeyRef: { name: secret, key: 'password' } } },
        { name: 'PGDATA', value: POSTGRES_PGDATA },
      ],
      ports: [{ name: 'postgres', containerPort: 5432 }],
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } },
      readinessProbe: {
        exec: { command: ['pg_isready', '-h', '127.0.0.1', '-U', 'postgres'] },
        periodSeconds: 2,
        failureThreshold: 3,
      },
      podSecurityContext: { runAsUser: POSTGRES_UID, runAsGroup: POSTGRES_UID, fsGroup: POSTGRES_UID },
      volumes: [
        { name: 'data', size: '1Gi', mountPath: POSTGRES_MOUNT, ...(restoreFrom ? { restoreFrom } : {}) },
      ],
      ...overrides,
    },
  };
}
