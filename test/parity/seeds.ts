import { parseKinds } from './generator.ts';

/**
 * The seeds `npm test` runs (test/integration/parity), chosen to cover every operation kind between
 * them, and kept short (6 operations each, small replica counts), so the file runs in about 1.5 to 2
 * minutes on two cores. `npm run parity -- --seeds N` runs more.
 * - 90: selector and template with app.kubernetes.io/managed-by: Helm; pod deletions; orphan pods
 *   with and without the pod-template-hash; scale to 0 through the scale subresource; an image change.
 * - 171: a rolling update whose pods never become Ready (past its 6 s deadline), a switch to
 *   Recreate while stuck, pause, revisionHistoryLimit 0, scale to 0.
 * - 184: a stuck rollout, an orphan pod the newest set should adopt, pause while past the
 *   deadline, template changes while paused.
 */
export const FIXED_SEEDS = [90, 171, 184];
export const FIXED_STEPS = 6;
export const FIXED_KINDS = parseKinds(undefined);
/**
 * Checks or snapshot paths the fixed seeds skip (see CHECKS in runner.ts). Empty: every divergence
 * fails `npm test`. Naming one here (e.g. 'status.unavailableReplicas') is how to merge while a
 * known divergence waits for its fix; remove it with the fix.
 */
export const FIXED_SKIP: readonly string[] = [];
