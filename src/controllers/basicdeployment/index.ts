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
import type { Manager } from '../../runtime/manager/manager.ts';
import { StatusDebouncer } from '../../runtime/write/status-debounce.ts';
import { createStatusWriter } from '../../runtime/write/status-writer.ts';
import { deploymentsForOrphan } from './claim.ts';
import { BasicDeploymentReconciler } from './reconciler.ts';

export const CONTROLLER_NAME = 'basicdeployment';

/**
 * Events of sets that may change who adopts them: creation, and updates that change labels or the
 * controller (upstream updateReplicaSet); an orphan's deletion concerns nobody.
 */
const orphanChanged: Predicate = { ...any(labelsChanged, controllerChanged), delete: () => false };

/**
 * BasicDeployment counts are read by people and dashboards, never by another controller, so their
 * progress-only updates are spaced wider than the sets' (whose availability drives rollouts).
 */
const DEPLOYMENT_PROGRESS_INTERVAL_MS = 5000;

/** BasicDeployment: creates, scales and deletes BasicReplicaSets only; never touches a Pod. */
export function registerBasicDeploymentController(manager: Manager): void {
  const deployments = manager.cache.informerFor<BasicDeployment>(BASIC_DEPLOYMENT);
  const sets = manager.cache.informerFor<BasicReplicaSet>(BASIC_REPLICA_SET);
  const status = createStatusWriter({
    client: manager.client,
    type: BASIC_DEPLOYMENT,
    cache: deployments,
    log: manager.log.child({ controller: CONTROLLER_NAME }),
  });
  const controller = manager
    .controller(CONTROLLER_NAME)
    // Annotations too: they are copied to the current set (and its revision is recorded on the deployment).
    .for(BASIC_DEPLOYMENT, any(generationChanged, annotationsChanged))
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
        debouncer: new StatusDebouncer(DEPLOYMENT_PROGRESS_INTERVAL_MS),
        statusWriter: status.writer,
      }),
    );
  status.attach(controller);
}
