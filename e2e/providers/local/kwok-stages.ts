import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dump, load } from 'js-yaml';
import { patchedSourceDir, VERSIONS } from './toolchain.ts';

/**
 * Pods whose template carries this annotation (value "true") run but never become Ready: the
 * differential test (test/parity) uses it for rollouts that cannot finish.
 */
export const NEVER_READY_ANNOTATION = 'test.basicoperator.dev/never-ready';

/**
 * kwokctl passes the cluster the Stages its configuration file lists, or, when it lists none, kwok's
 * defaults for nodes and pods (and kwok-controller v0.8.0 has no defaults of its own). So adding one
 * pod Stage means listing the defaults too. They are read from kwok's own source at the version we
 * build (the toolchain keeps it), as kwokctl would choose them for this cluster: node-initialize,
 * node-heartbeat-with-lease (the cluster has node leases; kwokctl raises its delay only up to
 * nodeStatusUpdateFrequencyMilliseconds, which is below it), pod-ready, pod-complete, pod-delete.
 * pod-ready skips pods with NEVER_READY_ANNOTATION, which pod-never-ready moves to Running instead,
 * with Ready and ContainersReady False.
 */
const DEFAULT_STAGE_FILES = [
  'kustomize/stage/node/fast/node-initialize.yaml',
  'kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml',
  'kustomize/stage/pod/fast/pod-ready.yaml',
  'kustomize/stage/pod/fast/pod-complete.yaml',
  'kustomize/stage/pod/fast/pod-delete.yaml',
];

interface Requirement {
  key: string;
  operator: string;
  values?: string[];
}

interface Stage {
  apiVersion: string;
  kind: 'Stage';
  metadata: { name: string };
  spec: {
    resourceRef: { apiGroup: string; kind: string };
    selector?: { matchAnnotations?: Record<string, string>; matchExpressions?: Requirement[] };
    next: Record<string, unknown>;
  } & Record<string, unknown>;
}

const annotationQuery = `.metadata.annotations["${NEVER_READY_ANNOTATION}"]`;

/**
 * The label of the operator's volume copy pods (backup and restore Jobs). kwok runs no container, so
 * it plays the mover's part: a copy pod completes with the report the mover writes for two equal
 * trees (src/apis/infra/v1alpha1/volume-copy.ts parseCopyReport). kwok's volumes hold no data: the
 * manifest says so (0 files, 0 bytes, a digest no real tree has), so a restore on kwok checks the
 * restored "tree" against the very manifest its backup recorded, as on a real node.
 */
const COPY_ROLE_QUERY = '.metadata.labels["infra.basicoperator.dev/role"]';
const COPY_ROLES = ['backup', 'restore'];
const KWOK_TREE = {
  files: 0,
  bytes: 0,
  digest: `sha256:${createHash('sha256').update('kwok: a simulated volume holds no data').digest('hex')}`,
};
export const KWOK_COPY_REPORT = JSON.stringify({
  v: 1,
  source: KWOK_TREE,
  target: KWOK_TREE,
  copyMs: 0,
  manifestMs: 0,
});

const NEVER_READY_STATUS = `{{ $now := Now }}
conditions:
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: Initialized
- lastTransitionTime: {{ $now | Quote }}
  status: "False"
  reason: ContainersNotReady
  type: Ready
- lastTransitionTime: {{ $now | Quote }}
  status: "False"
  reason: ContainersNotReady
  type: ContainersReady
containerStatuses:
{{ range .spec.containers }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  ready: false
  started: true
  restartCount: 0
  state:
    running:
      startedAt: {{ $now | Quote }}
{{ end }}
{{ with PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
podIP: {{ index . 0 | Quote }}
podIPs:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}
phase: Running
startTime: {{ $now | Quote }}
`;

const neverReadyStage: Stage = {
  apiVersion: 'kwok.x-k8s.io/v1alpha1',
  kind: 'Stage',
  metadata: { name: 'pod-never-ready' },
  spec: {
    resourceRef: { apiGroup: 'v1', kind: 'Pod' },
    selector: {
      matchExpressions: [
        { key: '.metadata.deletionTimestamp', operator: 'DoesNotExist' },
        { key: '.status.phase', operator: 'In', values: ['Pending'] },
        { key: annotationQuery, operator: 'In', values: ['true'] },
      ],
    },
    next: { statusTemplate: NEVER_READY_STATUS },
  },
};

/** kwok's pod-complete for copy pods: the same, with the mover's report as termination message. */
function copyPodCompleteStage(podComplete: Stage): Stage {
  const template = String(podComplete.spec.next.statusTemplate ?? '');
  const withMessage = template.replace(
    /( +)exitCode: 0\n/,
    (_line, indent: string) =>
      `${indent}exitCode: 0\n${indent}message: ${JSON.stringify(KWOK_COPY_REPORT)}\n`,
  );
  if (withMessage === template) {
    throw new Error(`kwok ${VERSIONS.kwok}'s pod-complete stage has no "exitCode: 0" line to extend`);
  }
  return {
    ...podComplete,
    metadata: { name: 'copy-pod-complete' },
    spec: {
      ...podComplete.spec,
      selector: {
        matchExpressions: [
          ...(podComplete.spec.selector?.matchExpressions ?? []),
          { key: COPY_ROLE_QUERY, operator: 'In', values: COPY_ROLES },
        ],
      },
      next: { ...podComplete.spec.next, statusTemplate: withMessage },
    },
  };
}

/** The Stage documents for kwokctl's configuration file (YAML, separated by ---). */
export function kwokStagesYaml(): string {
  const source = patchedSourceDir('sigs.k8s.io/kwok', VERSIONS.kwok);
  const stages = DEFAULT_STAGE_FILES.map((file) => {
    const path = join(source, file);
    if (!existsSync(path)) {
      throw new Error(
        `kwok's default stage ${path} is missing; rebuild the toolchain (npm run cluster:build)`,
      );
    }
    return load(readFileSync(path, 'utf8')) as Stage;
  });
  const podReady = stages.find((s) => s.metadata.name === 'pod-ready');
  if (!podReady?.spec.selector?.matchExpressions) {
    throw new Error(`kwok ${VERSIONS.kwok}'s pod-ready stage has no matchExpressions to extend`);
  }
  podReady.spec.selector.matchExpressions.push({ key: annotationQuery, operator: 'NotIn', values: ['true'] });
  const podComplete = stages.find((s) => s.metadata.name === 'pod-complete');
  if (!podComplete?.spec.selector?.matchExpressions) {
    throw new Error(`kwok ${VERSIONS.kwok}'s pod-complete stage has no matchExpressions to extend`);
  }
  const copyPodComplete = copyPodCompleteStage(structuredClone(podComplete));
  podComplete.spec.selector.matchExpressions.push({
    key: COPY_ROLE_QUERY,
    operator: 'NotIn',
    values: COPY_ROLES,
  });
  return [...stages, neverReadyStage, copyPodComplete]
    .map((stage) => dump(stage, { lineWidth: -1 }).trimEnd())
    .join('\n---\n');
}
