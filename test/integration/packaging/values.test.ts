import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ClusterRole, V1ClusterRoleBinding, V1Deployment } from '@kubernetes/client-node';
import { find, type Manifest } from '../../unit/packaging/manifests.ts';
import { helm, renderChart, templateArgs } from './helm.ts';

/** Bad values must stop `helm install` with a message that names the value and what is wrong. */
const BAD_VALUES: ReadonlyArray<{ set: string[]; message: RegExp }> = [
  { set: ['replicaCount=two'], message: /at '\/replicaCount': got string, want integer/ },
  { set: ['replicaCount=-1'], message: /at '\/replicaCount': minimum: got -1, want 0/ },
  {
    set: ['logLevel=verbose'],
    message: /at '\/logLevel': value must be one of 'error', 'warn', 'info', 'debug'/,
  },
  { set: ['concurrency.machine=0'], message: /at '\/concurrency\/machine': minimum: got 0, want 1/ },
  {
    set: ['concurrency.machines=2'],
    message: /at '\/concurrency': additional properties 'machines' not allowed/,
  },
  {
    set: ['watchNamespaces={Team_A}'],
    message: /at '\/watchNamespaces\/0': 'Team_A' does not match pattern/,
  },
  { set: ['leaderElection.leaseDuration=15'], message: /at '\/leaderElection\/leaseDuration': got number/ },
  {
    set: ['leaderElection.leaseDuration=15 s'],
    message: /at '\/leaderElection\/leaseDuration': '15 s' does not match pattern/,
  },
  { set: ['image.pullPolicy=Sometimes'], message: /at '\/image\/pullPolicy': value must be one of/ },
  {
    set: ['prometheusRule.reconcileErrorRatio=2'],
    message: /at '\/prometheusRule\/reconcileErrorRatio': maximum: got 2, want 1/,
  },
  {
    set: ['prometheusRule.reconcileStuckAfter=10'],
    message: /at '\/prometheusRule\/reconcileStuckAfter': got number, want string/,
  },
  { set: ['image.digest=latest'], message: /at '\/image\/digest': 'latest' does not match pattern/ },
  { set: ['imagee.tag=v1'], message: /additional properties 'imagee' not allowed/ },
  {
    set: ['admissionPolicy.enabled=yes'],
    message: /at '\/admissionPolicy\/enabled': got string, want boolean/,
  },
  { set: ['backup.jobImage=not an image'], message: /at '\/backup\/jobImage'/ },
  {
    set: ['resources.request.cpu=1'],
    message: /at '\/resources': additional properties 'request' not allowed/,
  },
  {
    set: ['leaderElection.renewDeadline=20s'],
    message:
      /leaderElection\.renewDeadline \(20s\) must be shorter than leaderElection\.leaseDuration \(15s\)/,
  },
  {
    set: ['leaderElection.retryPeriod=10s'],
    message: /leaderElection\.retryPeriod \(10s\) must be shorter than leaderElection\.renewDeadline \(10s\)/,
  },
  {
    set: ['gracefulShutdownTimeout=1m'],
    message: /gracefulShutdownTimeout \(1m\) must be shorter than terminationGracePeriodSeconds \(45 s\)/,
  },
  { set: ['leaderElection.enabled=false'], message: /replicaCount > 1 needs leaderElection\.enabled=true/ },
  {
    set: ['serviceAccount.create=false'],
    message: /serviceAccount\.name is required when serviceAccount\.create is false/,
  },
];

describe('values.schema.json and the chart checks reject bad values', () => {
  for (const { set, message } of BAD_VALUES) {
    it(`--set ${set.join(' --set ')}`, async () => {
      const result = await helm(templateArgs({ set }));
      assert.notEqual(result.code, 0, `helm template accepted ${set.join(', ')}`);
      assert.match(result.stderr, message);
    });
  }
});

describe('the chart accepts and applies good values', () => {
  const env = (manifests: Manifest[]): Record<string, string | undefined> => {
    const deployment = find<Manifest & V1Deployment>(manifests, 'Deployment', 'basic-operator');
    const container = deployment.spec?.template.spec?.containers[0];
    return Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value]));
  };

  it('passes watch namespaces, per-controller concurrency and timings to the operator', async () => {
    const manifests = await renderChart({
      set: [
        'watchNamespaces={team-a,team-b}',
        'concurrency.default=3',
        'concurrency.basicreplicaset=10',
        'concurrency.machine=2',
        'concurrency.machine-backup=1',
        'leaderElection.leaseDuration=30s',
        'leaderElection.renewDeadline=20s',
        'leaderElection.retryPeriod=1500ms',
        'logLevel=debug',
        'backup.jobImage=registry.example.com/tools/busybox:1.36',
        'backup.deadline=3h',
      ],
    });
    assert.deepEqual(
      {
        namespaces: env(manifests).BASIC_OPERATOR_NAMESPACES,
        workers: env(manifests).BASIC_OPERATOR_MAX_CONCURRENT_RECONCILES,
        concurrency: env(manifests).BASIC_OPERATOR_CONCURRENCY,
        lease: env(manifests).BASIC_OPERATOR_LEADER_ELECTION_LEASE_DURATION,
        retry: env(manifests).BASIC_OPERATOR_LEADER_ELECTION_RETRY_PERIOD,
        logLevel: env(manifests).BASIC_OPERATOR_LOG_LEVEL,
        jobImage: env(manifests).BASIC_OPERATOR_BACKUP_JOB_IMAGE,
        deadline: env(manifests).BASIC_OPERATOR_VOLUME_COPY_DEADLINE,
      },
      {
        namespaces: 'team-a,team-b',
        workers: '3',
        concurrency: 'basicreplicaset=10,machine=2,machine-backup=1',
        lease: '30s',
        retry: '1500ms',
        logLevel: 'debug',
        jobImage: 'registry.example.com/tools/busybox:1.36',
        deadline: '3h',
      },
    );
  });

  it('grants the manager roles only in the watched namespaces when there are some (CRDs and metrics reviews cluster-wide)', async () => {
    const manifests = await renderChart({ set: ['watchNamespaces={team-a,team-b}'] });
    // CustomResourceDefinitions, TokenReviews and SubjectAccessReviews are cluster-scoped: reading
    // the first and creating the others are the cluster-wide grants (the helm test hook aside).
    const clusterBindings = manifests.filter(
      (m) => m.kind === 'ClusterRoleBinding' && m.metadata.annotations?.['helm.sh/hook'] !== 'test',
    );
    assert.deepEqual(
      clusterBindings.map(
        (b) => `${b.metadata.name} -> ${(b as Manifest & V1ClusterRoleBinding).roleRef.name}`,
      ),
      [
        'basic-operator-crd-reader -> basic-operator-crd-reader',
        'basic-operator-metrics-auth -> basic-operator-metrics-auth',
      ],
    );
    const metricsAuth = find<Manifest & V1ClusterRole>(
      manifests,
      'ClusterRole',
      'basic-operator-metrics-auth',
    );
    assert.deepEqual(metricsAuth.rules, [
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ]);
    const reader = find<Manifest & V1ClusterRole>(manifests, 'ClusterRole', 'basic-operator-crd-reader');
    assert.deepEqual(reader.rules, [
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        verbs: ['list', 'watch'],
      },
    ]);
    // Both manager roles, the operator's own and the providers' aggregated one, in each namespace.
    for (const role of ['basic-operator-manager-base', 'basic-operator-manager']) {
      const bindings = manifests.filter((m) => m.kind === 'RoleBinding' && m.metadata.name === role);
      assert.deepEqual(bindings.map((b) => b.metadata.namespace).sort(), ['team-a', 'team-b']);
      for (const binding of bindings) {
        assert.deepEqual(binding.roleRef, {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: role,
        });
      }
    }
  });

  it('runs one replica without leader election when asked', async () => {
    const manifests = await renderChart({ set: ['replicaCount=1', 'leaderElection.enabled=false'] });
    assert.equal(env(manifests).BASIC_OPERATOR_LEADER_ELECT, 'false');
    assert.equal(manifests.filter((m) => m.kind === 'Role').length, 0);
  });

  it('pins the image by digest, and defaults the tag to the appVersion', async () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    const image = async (set: string[]) =>
      find<Manifest & V1Deployment>(await renderChart({ set }), 'Deployment', 'basic-operator').spec?.template
        .spec?.containers[0]?.image;
    assert.equal(await image([]), 'ghcr.io/basicoperator/basic-operator:0.1.0');
    assert.equal(await image(['image.tag=dev', 'image.repository=basic-operator']), 'basic-operator:dev');
    assert.equal(await image([`image.digest=${digest}`]), `ghcr.io/basicoperator/basic-operator@${digest}`);
  });

  it('renders the optional ServiceMonitor and PodDisruptionBudget', async () => {
    const manifests = await renderChart({
      set: [
        'serviceMonitor.enabled=true',
        'serviceMonitor.labels.release=prometheus',
        'podDisruptionBudget.enabled=true',
      ],
    });
    const monitor = find(manifests, 'ServiceMonitor', 'basic-operator');
    assert.equal(monitor.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(monitor.metadata.labels?.release, 'prometheus');
    assert.deepEqual(monitor.spec, {
      selector: {
        matchLabels: {
          'app.kubernetes.io/name': 'basic-operator',
          'app.kubernetes.io/instance': 'basic-operator',
          'app.kubernetes.io/component': 'controller-manager',
        },
      },
      namespaceSelector: { matchNames: ['basic-operator-system'] },
      endpoints: [
        {
          port: 'metrics',
          path: '/metrics',
          interval: '30s',
          scrapeTimeout: '10s',
          scheme: 'https',
          bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
          tlsConfig: { insecureSkipVerify: true },
        },
      ],
    });
    const pdb = find(manifests, 'PodDisruptionBudget', 'basic-operator');
    assert.deepEqual(pdb.spec, {
      maxUnavailable: 1,
      selector: {
        matchLabels: {
          'app.kubernetes.io/name': 'basic-operator',
          'app.kubernetes.io/instance': 'basic-operator',
          'app.kubernetes.io/component': 'controller-manager',
        },
      },
    });
  });

  it("verifies the metrics certificate against the Secret's CA when one is given", async () => {
    const manifests = await renderChart({
      set: ['serviceMonitor.enabled=true', 'metrics.certSecret=operator-metrics-cert'],
    });
    const monitor = find(manifests, 'ServiceMonitor', 'basic-operator') as Manifest & {
      spec: { endpoints: Array<{ tlsConfig?: unknown }> };
    };
    assert.deepEqual(monitor.spec.endpoints[0]?.tlsConfig, {
      serverName: 'basic-operator-metrics.basic-operator-system.svc',
      ca: { secret: { name: 'operator-metrics-cert', key: 'ca.crt' } },
    });
  });

  it('scrapes plain HTTP without a token when metrics.secure=false', async () => {
    const manifests = await renderChart({ set: ['serviceMonitor.enabled=true', 'metrics.secure=false'] });
    const monitor = find(manifests, 'ServiceMonitor', 'basic-operator') as Manifest & {
      spec: { endpoints: unknown[] };
    };
    assert.deepEqual(monitor.spec.endpoints, [
      { port: 'metrics', path: '/metrics', interval: '30s', scrapeTimeout: '10s' },
    ]);
  });

  it('lets only labelled namespaces (and the helm test Pod) reach the metrics port with metrics.networkPolicy', async () => {
    const manifests = await renderChart({
      set: ['metrics.networkPolicy.enabled=true', 'metrics.networkPolicy.namespaceLabels.team=monitoring'],
    });
    const policy = find(manifests, 'NetworkPolicy', 'basic-operator-allow-metrics');
    assert.deepEqual(policy.spec, {
      podSelector: {
        matchLabels: {
          'app.kubernetes.io/name': 'basic-operator',
          'app.kubernetes.io/instance': 'basic-operator',
          'app.kubernetes.io/component': 'controller-manager',
        },
      },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [
            { namespaceSelector: { matchLabels: { metrics: 'enabled', team: 'monitoring' } } },
            {
              podSelector: {
                matchLabels: {
                  'app.kubernetes.io/instance': 'basic-operator',
                  'app.kubernetes.io/component': 'test',
                },
              },
            },
          ],
          ports: [{ port: 'metrics', protocol: 'TCP' }],
        },
      ],
    });
  });

  it('leaves the ServiceMonitor out by default, and renders the NetworkPolicy and PodDisruptionBudget', async () => {
    const kinds = new Set((await renderChart()).map((m) => m.kind));
    assert.ok(!kinds.has('ServiceMonitor'));
    assert.ok(kinds.has('NetworkPolicy'));
    assert.ok(kinds.has('PodDisruptionBudget'));
    const off = new Set(
      (
        await renderChart({
          set: ['metrics.networkPolicy.enabled=false', 'podDisruptionBudget.enabled=false'],
        })
      ).map((m) => m.kind),
    );
    assert.ok(!off.has('NetworkPolicy'));
    assert.ok(!off.has('PodDisruptionBudget'));
  });

  it('spreads two or more replicas over nodes (soft anti-affinity) and keeps one up (PodDisruptionBudget)', async () => {
    const selector = {
      'app.kubernetes.io/name': 'basic-operator',
      'app.kubernetes.io/instance': 'basic-operator',
      'app.kubernetes.io/component': 'controller-manager',
    };
    const spec = (manifests: Manifest[]) =>
      find<Manifest & V1Deployment>(manifests, 'Deployment', 'basic-operator').spec?.template.spec;
    const three = await renderChart({ set: ['replicaCount=3'] });
    assert.deepEqual(spec(three)?.affinity, {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 100,
            podAffinityTerm: {
              topologyKey: 'kubernetes.io/hostname',
              labelSelector: { matchLabels: selector },
            },
          },
        ],
      },
    });
    assert.deepEqual(find(three, 'PodDisruptionBudget', 'basic-operator').spec, {
      maxUnavailable: 1,
      selector: { matchLabels: selector },
    });
    // One replica: a budget would block drains or protect nothing, and there is nothing to spread.
    const one = await renderChart({ set: ['replicaCount=1', 'leaderElection.enabled=false'] });
    assert.equal(spec(one)?.affinity, undefined);
    assert.ok(!one.some((m) => m.kind === 'PodDisruptionBudget'));
    // The user's affinity replaces the default one.
    const own = await renderChart({
      set: [
        'affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight=1',
        'affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key=pool',
        'affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].operator=Exists',
      ],
    });
    assert.deepEqual(spec(own)?.affinity, {
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 1, preference: { matchExpressions: [{ key: 'pool', operator: 'Exists' }] } },
        ],
      },
    });
  });

  it('bounds the client budget by default (100 qps, burst 1.5 x), and passes kubeApi values on', async () => {
    assert.deepEqual(
      [
        env(await renderChart()).BASIC_OPERATOR_KUBE_API_QPS,
        env(await renderChart()).BASIC_OPERATOR_KUBE_API_BURST,
      ],
      ['100', '0'],
    );
    const set = env(await renderChart({ set: ['kubeApi.qps=40', 'kubeApi.burst=80'] }));
    assert.deepEqual([set.BASIC_OPERATOR_KUBE_API_QPS, set.BASIC_OPERATOR_KUBE_API_BURST], ['40', '80']);
    const off = env(await renderChart({ set: ['kubeApi.qps=0'] }));
    assert.equal(off.BASIC_OPERATOR_KUBE_API_QPS, '0');
  });
});
