import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type {
  V1ClusterRoleBinding,
  V1Container,
  V1Deployment,
  V1Pod,
  V1PodSpec,
  V1Service,
  V1ServiceAccount,
} from '@kubernetes/client-node';
import { OPERATOR_FLAGS, readOperatorFlags } from '../../../src/controllers/flags.ts';
import { envName, FLAGS, parseCommandLine } from '../../../src/runtime/manager/config.ts';
import { find, type Manifest } from '../../unit/packaging/manifests.ts';
import { renderChart } from './helm.ts';

const STANDARD_LABELS = [
  'app.kubernetes.io/name',
  'app.kubernetes.io/instance',
  'app.kubernetes.io/version',
  'app.kubernetes.io/component',
  'app.kubernetes.io/part-of',
  'app.kubernetes.io/managed-by',
  'helm.sh/chart',
];

/**
 * The Pod Security "restricted" profile (https://kubernetes.io/docs/concepts/security/pod-security-standards/),
 * checked field by field; the integration test also has the API server's admission plugin judge it.
 */
function assertRestricted(spec: V1PodSpec | undefined, what: string): void {
  assert.ok(spec, `${what} has no pod spec`);
  const pod = spec.securityContext ?? {};
  for (const container of [...(spec.initContainers ?? []), ...spec.containers]) {
    const c = container.securityContext ?? {};
    const where = `${what}, container ${container.name}`;
    assert.equal(c.runAsNonRoot ?? pod.runAsNonRoot, true, `${where}: runAsNonRoot`);
    assert.notEqual(c.runAsUser ?? pod.runAsUser, 0, `${where}: runAsUser 0`);
    assert.equal(c.allowPrivilegeEscalation, false, `${where}: allowPrivilegeEscalation`);
    assert.notEqual(c.privileged, true, `${where}: privileged`);
    assert.deepEqual(c.capabilities?.drop, ['ALL'], `${where}: capabilities.drop`);
    assert.deepEqual(c.capabilities?.add ?? [], [], `${where}: capabilities.add`);
    assert.equal(c.readOnlyRootFilesystem, true, `${where}: readOnlyRootFilesystem`);
    assert.equal(
      (c.seccompProfile ?? pod.seccompProfile)?.type,
      'RuntimeDefault',
      `${where}: seccompProfile`,
    );
  }
  assert.ok(!spec.hostNetwork && !spec.hostPID && !spec.hostIPC, `${what}: host namespaces`);
  for (const volume of spec.volumes ?? []) {
    assert.ok(!volume.hostPath, `${what}: hostPath volume ${volume.name}`);
  }
}

describe('the rendered operator Deployment', () => {
  let manifests: Manifest[];
  let deployment: Manifest & V1Deployment;
  let manager: V1Container;
  before(async () => {
    manifests = await renderChart();
    deployment = find<Manifest & V1Deployment>(manifests, 'Deployment', 'basic-operator');
    const container = deployment.spec?.template.spec?.containers.find((c) => c.name === 'manager');
    assert.ok(container, 'no manager container');
    manager = container;
  });
  const env = () => new Map((manager.env ?? []).map((e) => [e.name, e]));

  it('passes the Pod Security restricted profile', () => {
    assertRestricted(deployment.spec?.template.spec, 'Deployment basic-operator');
  });

  it('runs two replicas with leader election', () => {
    assert.equal(deployment.spec?.replicas, 2);
    assert.equal(env().get(envName('leader-elect'))?.value, 'true');
  });

  it('probes /healthz and /readyz on :8081, and serves /metrics over HTTPS on :8443', () => {
    const port = (name: unknown) => manager.ports?.find((p) => p.name === name)?.containerPort;
    assert.equal(manager.livenessProbe?.httpGet?.path, '/healthz');
    assert.equal(port(manager.livenessProbe?.httpGet?.port), 8081);
    assert.equal(manager.readinessProbe?.httpGet?.path, '/readyz');
    assert.equal(port(manager.readinessProbe?.httpGet?.port), 8081);
    assert.equal(port('metrics'), 8443);
    assert.equal(env().get(envName('health-probe-bind-address'))?.value, ':8081');
    assert.equal(env().get(envName('metrics-bind-address'))?.value, ':8443');
    assert.equal(env().get(envName('metrics-secure'))?.value, 'true');
  });

  it('sets resource requests and limits', () => {
    for (const kind of ['requests', 'limits'] as const) {
      assert.ok(manager.resources?.[kind]?.cpu, `${kind}.cpu`);
      assert.ok(manager.resources?.[kind]?.memory, `${kind}.memory`);
    }
  });

  it('gives the operator its pod name and namespace through the downward API', () => {
    assert.equal(env().get('POD_NAME')?.valueFrom?.fieldRef?.fieldPath, 'metadata.name');
    assert.equal(env().get('POD_NAMESPACE')?.valueFrom?.fieldRef?.fieldPath, 'metadata.namespace');
  });

  it('sets only environment variables the operator reads', () => {
    const flags = [...Object.keys(FLAGS), ...Object.keys(OPERATOR_FLAGS)];
    const known = new Set([...flags.map(envName), 'POD_NAME', 'POD_NAMESPACE']);
    for (const name of env().keys()) assert.ok(known.has(name), `${name} is not a flag of the operator`);
  });

  it('configures the operator with settings it accepts', () => {
    const variables: NodeJS.ProcessEnv = {
      POD_NAME: 'basic-operator-0',
      POD_NAMESPACE: 'basic-operator-system',
    };
    for (const [name, variable] of env()) if (variable.value !== undefined) variables[name] = variable.value;
    const parsed = parseCommandLine([], variables, OPERATOR_FLAGS);
    assert.notEqual(parsed, 'help');
    if (parsed === 'help') return;
    const { config } = parsed;
    const operator = readOperatorFlags(parsed.flags);
    assert.deepEqual(
      {
        namespaces: config.namespaces,
        leaderElection: config.leaderElection.enabled,
        leaseNamespace: config.leaderElection.namespace,
        leaseName: config.leaderElection.id,
        metrics: config.metricsBindAddress,
        metricsSecure: config.metrics.secure,
        health: config.healthProbeBindAddress,
        logLevel: config.logLevel,
        backupJobImage: operator.backupJobImage,
        volumeCopyDeadlineMs: operator.volumeCopyDeadlineMs,
        qps: config.qps,
        burst: config.burst,
      },
      {
        namespaces: [],
        leaderElection: true,
        leaseNamespace: 'basic-operator-system',
        leaseName: 'basic-operator.basicoperator.dev',
        metrics: ':8443',
        metricsSecure: true,
        health: ':8081',
        logLevel: 'info',
        backupJobImage: 'ghcr.io/basicoperator/basic-operator:0.1.0',
        volumeCopyDeadlineMs: 3_600_000,
        qps: 100,
        burst: 150,
      },
    );
    assert.match(config.leaderElection.identity, /^basic-operator-0_/);
  });

  it('mounts an API token in the operator pod only: its ServiceAccount mounts none into other pods', () => {
    assert.equal(deployment.spec?.template.spec?.automountServiceAccountToken, true);
    const account = find<Manifest & V1ServiceAccount>(manifests, 'ServiceAccount', 'basic-operator');
    assert.equal(account.automountServiceAccountToken, false);
  });

  it('stops within the grace period: SIGTERM shutdown timeout < terminationGracePeriodSeconds', () => {
    const shutdown = env().get(envName('graceful-shutdown-timeout'))?.value ?? '';
    const match = /^(\d+)s$/.exec(shutdown);
    assert.ok(match, `unexpected shutdown timeout ${shutdown}`);
    assert.ok(Number(match[1]) < (deployment.spec?.template.spec?.terminationGracePeriodSeconds ?? 30));
  });

  it('puts the standard labels on every object', () => {
    for (const manifest of manifests) {
      for (const label of STANDARD_LABELS) {
        assert.ok(
          manifest.metadata.labels?.[label],
          `${manifest.kind}/${manifest.metadata.name} lacks ${label}`,
        );
      }
    }
  });

  it('selects its pods, and only them, from the metrics Service', () => {
    const service = find<Manifest & V1Service>(manifests, 'Service', 'basic-operator-metrics');
    const podLabels = deployment.spec?.template.metadata?.labels ?? {};
    const selector = service.spec?.selector ?? {};
    for (const [key, value] of Object.entries(selector)) assert.equal(podLabels[key], value, key);
    assert.deepEqual(selector, deployment.spec?.selector.matchLabels);
    assert.deepEqual(service.spec?.ports, [
      { name: 'metrics', port: 8443, targetPort: 'metrics', protocol: 'TCP' },
    ]);
  });

  it('has a helm test Pod that fetches /metrics, itself restricted and outside the Service', () => {
    const pod = find<Manifest & V1Pod>(manifests, 'Pod', 'basic-operator-test-metrics');
    assert.equal(pod.metadata.annotations?.['helm.sh/hook'], 'test');
    const container = pod.spec?.containers[0];
    assert.match(
      container?.image ?? '',
      /^ghcr\.io\/basicoperator\/basic-operator:/,
      "the operator's own image (Node)",
    );
    assert.equal(
      container?.env?.find((e) => e.name === 'METRICS_URL')?.value,
      'https://basic-operator-metrics.basic-operator-system.svc:8443/metrics',
    );
    const script = container?.command?.join(' ') ?? '';
    assert.match(script, /serviceaccount\/token/);
    assert.match(script, /Authorization: `Bearer \$\{/);
    // It scrapes as a ServiceAccount of its own, bound (by a test hook too) to the metrics-reader role.
    assert.equal(pod.spec?.serviceAccountName, 'basic-operator-test-metrics');
    const binding = find<Manifest & V1ClusterRoleBinding>(
      manifests,
      'ClusterRoleBinding',
      'basic-operator-test-metrics',
    );
    assert.equal(binding.metadata.annotations?.['helm.sh/hook'], 'test');
    assert.equal(binding.roleRef.name, 'basic-operator-metrics-reader');
    assert.deepEqual(binding.subjects, [
      { kind: 'ServiceAccount', name: 'basic-operator-test-metrics', namespace: 'basic-operator-system' },
    ]);
    assertRestricted(pod.spec, 'helm test Pod');
    const service = find<Manifest & V1Service>(manifests, 'Service', 'basic-operator-metrics');
    const selected = Object.entries(service.spec?.selector ?? {}).every(
      ([key, value]) => pod.metadata.labels?.[key] === value,
    );
    assert.ok(!selected, 'the metrics Service would send traffic to the test Pod');
  });

  it('serves plain HTTP on :8080 with metrics.secure=false, and its helm test Pod fetches it without a token', async () => {
    const plain = await renderChart({ set: ['metrics.secure=false', 'metrics.service.port=8080'] });
    const container = find<Manifest & V1Deployment>(plain, 'Deployment', 'basic-operator').spec?.template.spec
      ?.containers[0];
    const variables = new Map((container?.env ?? []).map((e) => [e.name, e.value]));
    assert.equal(variables.get(envName('metrics-secure')), 'false');
    assert.equal(variables.get(envName('metrics-bind-address')), ':8080');
    assert.equal(container?.ports?.find((p) => p.name === 'metrics')?.containerPort, 8080);
    const pod = find<Manifest & V1Pod>(plain, 'Pod', 'basic-operator-test-metrics');
    assert.equal(
      pod.spec?.containers[0]?.env?.find((e) => e.name === 'METRICS_URL')?.value,
      'http://basic-operator-metrics.basic-operator-system.svc:8080/metrics',
    );
    assert.equal(pod.spec?.automountServiceAccountToken, false);
    assert.ok(
      !plain.some(
        (m) => m.metadata.name === 'basic-operator-test-metrics' && m.kind === 'ClusterRoleBinding',
      ),
    );
  });

  it('mounts a certificate Secret and points the operator at it', async () => {
    const rendered = await renderChart({ set: ['metrics.certSecret=operator-metrics-cert'] });
    const spec = find<Manifest & V1Deployment>(rendered, 'Deployment', 'basic-operator').spec?.template.spec;
    const container = spec?.containers[0];
    const certPath = container?.env?.find((e) => e.name === envName('metrics-cert-path'))?.value;
    assert.equal(certPath, '/etc/basic-operator/metrics-certs');
    const mount = container?.volumeMounts?.find((m) => m.mountPath === certPath);
    assert.equal(mount?.readOnly, true);
    const volume = spec?.volumes?.find((v) => v.name === mount?.name);
    assert.equal(volume?.secret?.secretName, 'operator-metrics-cert');
  });

  it("runs the helm test with the operator's own image and Node (busybox's TLS cannot reach the metrics)", async () => {
    const pod = find<Manifest & V1Pod>(
      await renderChart({ set: ['image.repository=registry.example.com/basic-operator', 'image.tag=1.2.3'] }),
      'Pod',
      'basic-operator-test-metrics',
    );
    const container = pod.spec?.containers[0];
    assert.equal(container?.image, 'registry.example.com/basic-operator:1.2.3');
    assert.equal(container?.command?.[0], '/nodejs/bin/node');
    assert.match(
      container?.env?.find((e) => e.name === 'METRICS_URL')?.value ?? '',
      /^https:\/\/basic-operator-metrics\.\S+\.svc:8443\/metrics$/,
    );
  });
});
