import { parseKinds } from './generator.ts';
import { CLASSIC_KINDS, OP_KINDS } from './model.ts';

/**
 * The seeds `npm test` runs (test/integration/parity), chosen to cover every operation kind between
 * them, and kept short (6 operations each, small replica counts): about 1.5 minutes on two cores, 2.5
 * with RACE_SEEDS. `npm run parity -- --seeds N` runs more.
 * - 90: selector and template with app.kubernetes.io/managed-by: Helm; pod deletions; orphan pods
 *   with and without the pod-template-hash; scale to 0 through the scale subresource; an image change.
 * - 171: a rolling update whose pods never become Ready (past its 6 s deadline), a switch to
 *   Recreate while stuck, pause, revisionHistoryLimit 0, scale to 0.
 * - 184: a stuck rollout, an orphan pod the newest set should adopt, pause while past the
 *   deadline, template changes while paused.
 */
export const FIXED_SEEDS = [90, 171, 184];
export const FIXED_STEPS = 6;
/** The kinds these seeds were drawn from (new kinds change every draw): all but the later ones. */
export const FIXED_KINDS_ARG = OP_KINDS.filter((k) => !CLASSIC_KINDS.includes(k))
  .map((k) => `-${k}`)
  .join(',');
export const FIXED_KINDS = parseKinds(FIXED_KINDS_ARG);
/**
 * Seeds of every kind, the operations between steps included (operator in a child process):
 * - 273: a rolling update stuck on pods that never become Ready; an image change and, 700 ms later,
 *   the operator SIGKILLed and restarted (back to back); a pod relabelled out of its set;
 *   `delete --cascade=orphan` and a re-create that adopts three sets.
 * - 90 (drawn from every kind, so not the 90 above): a pod deleted and, right behind it, a hand-made
 *   pod with the newest set's pod-template-hash (issue 36: adopted once, the surplus deleted at once);
 *   scale to 0, an image change and a scale to 1 back to back; a switch to Recreate.
 */
export const RACE_SEEDS = [273, 90];
export const RACE_STEPS = 4;
/**
 * Checks or snapshot paths the fixed seeds skip (see CHECKS in runner.ts). Empty: every divergence
 * fails `npm test`. Naming one here (e.g. 'status.unavailableReplicas') is how to merge while a
 * known divergence waits for its fix; remove it with the fix.
 */
export const FIXED_SKIP: readonly string[] = [];
