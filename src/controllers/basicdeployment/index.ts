import {
  BASIC_DEPLOYMENT,
  BASIC_REPLICA_SET,
  type BasicDeployment,
  type BasicReplicaSet,
} from '../../apis/index.ts';
import {
  annotationsChanged,
  any,
  controllerChanged,
  generationChanged,
  labelsChanged,
  type Predicate,
} from '../../runtime/controller/predicates.ts';
import { errorMessage } from '../../runtime/log.ts';
import type { Manager } from '../../runtime/manager/manager.ts';
import { deploymentsForOrphan } from './claim.ts';
import { ProgressReason } from './logic/progress.ts';
import { registerBasicDeploymentMetrics } from './metrics.ts';
import { BasicDeploymentReconciler } from './reconciler.ts';
import { RevisionWriter } from './revision-writer.ts';

export const CONTROLLER_NAME = 'basicdeployment';

/**
 * Events of sets that may change who adopts them: creation, and updates that change labels or the
 * controller (upstream updateReplicaSet); an orphan's deletion concerns nobody.
 */
const orphanChanged: Predicate = { ...any(labelsChanged, controllerChanged), delete: () => false };

/**
 * Counts whose rise alone is progress. BasicDeployment counts are read by people and dashboards,
 * never by another controller, so their progress-only updates are spaced wider than the sets'
 * (whose availability drives rollouts).
 */
const PROGRESS_COUNTS = ['replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas'] as const;
const PROGRESS_INTERVAL_MS = 5000;
/**
 * For the same readers, a status waits a quarter of a second before it is sent (not the runtime's
 * 20 ms), and what comes meanwhile replaces it: a quick scale-up's two reports, the new generation
 * seen and then its pods ready, become one write of a custom resource, which kube-apiserver pays more
 * for than for a built-in type. Ready is never held.
 */
const STATUS_BATCH_MS = 250;
/** Progressing=True reasons of a rollout still under way: moving between them is progress too. */
const IN_PROGRESS_REASONS: ReadonlySet<string> = new Set([
  ProgressReason.NewReplicaSetCreated,
  ProgressReason.FoundNewReplicaSet,
  ProgressReason.ReplicaSetUpdated,
]);

/** BasicDeployment: creates, scales and deletes BasicReplicaSets only; never touches a Pod. */
export function registerBasicDeploymentController(manager: Manager): void {
  const deployments = manager.cache.informerFor<BasicDeployment>(BASIC_DEPLOYMENT);
  const sets = manager.cache.informerFor<BasicReplicaSet>(BASIC_REPLICA_SET);
  registerBasicDeploymentMetrics(manager.registry, () => deployments.list());
  const log = manager.log.child({ controller: CONTROLLER_NAME });
  const revisions = new RevisionWriter({
    client: manager.client,
    onError: (key, err) => {
      log.warn('recording the revision on the deployment failed, will retry', {
        key,
        error: errorMessage(err),
      });
      controller.retryKey(key);
    },
  });
  const controller = manager
    .controller(CONTROLLER_NAME)
    // Annotations too: they are copied to the current set (and its revision is recorded on the deployment).
    .for(BASIC_DEPLOYMENT, any(generationChanged, annotationsChanged))
    .status({
      batchMs: STATUS_BATCH_MS,
      progress: {
        counts: PROGRESS_COUNTS,
        reasons: IN_PROGRESS_REASONS,
        intervalMs: PROGRESS_INTERVAL_MS,
        // Ready is what `kubectl wait` and the users' tools wait for: never held.
        done: (status) => status.ready === true,
      },
    })
    .owns(BASIC_REPLICA_SET)
    // Orphan sets wake the deployments that may adopt them (upstream getDeploymentsForReplicaSet).
    .watches<BasicReplicaSet>(
      BASIC_REPLICA_SET,
      (set) =>
        deploymentsForOrphan(set, (namespace) => deployments.list({ namespace })).map((d) => ({
          namespace: d.metadata.namespace ?? '',
          name: d.metadata.name ?? '',
        })),
      orphanChanged,
    )
    .complete(
      new BasicDeploymentReconciler({
        client: manager.client,
        deployments,
        sets,
        events: manager.eventsFor(CONTROLLER_NAME, BASIC_DEPLOYMENT),
        revisions,
      }),
    );
  controller.onStop(() => revisions.drain());
}
