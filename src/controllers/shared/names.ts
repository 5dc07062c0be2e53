// Bounded names for what the controllers create: every name is derived from its inputs, so a
// restarted operator finds (or creates again under the same name) what it made before.
import { createHash } from 'node:crypto';

/** DNS subdomain names (pods, claims, VolumeBackups) may be 253 characters; label values and Job names 63. */
export const MAX_OBJECT_NAME = 253;
export const MAX_LABEL_VALUE = 63;

/**
 * `base` if it fits in `max` characters; otherwise a prefix of it plus `-` and 8 hex digits of its
 * hash, so long names stay unique and valid (no trailing `-` or `.` before the suffix).
 */
export function boundedName(base: string, max: number): string {
  if (base.length <= max) return base;
  const hash = createHash('sha256').update(base).digest('hex').slice(0, 8);
  const prefix = base.slice(0, max - hash.length - 1).replace(/[-.]+$/, '');
  return `${prefix}-${hash}`;
}
