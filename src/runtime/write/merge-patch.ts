/**
 * JSON merge patches (RFC 7386) that replace one JSON value with another. A merge patch merges
 * objects key by key, so to *replace* an object the patch must carry every key of the new value and
 * null for each key of the old value the new one drops. Arrays and scalars are replaced whole.
 *
 * Limitation of the format: a null inside the new value means "delete", so null cannot be stored.
 */

export type JsonObject = { [key: string]: unknown };

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value as JSON would carry it: undefined members dropped, Dates as strings. */
export function toJsonValue<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** A merge patch that turns `from` into `to` when applied to `from`. */
export function replacementMergePatch(from: unknown, to: unknown): unknown {
  if (!isJsonObject(from) || !isJsonObject(to)) return to;
  const patch: JsonObject = {};
  for (const [key, value] of Object.entries(to)) {
    if (value === undefined) continue;
    patch[key] = replacementMergePatch(from[key], value);
  }
  for (const key of Object.keys(from)) {
    if (to[key] === undefined) patch[key] = null;
  }
  return patch;
}

/** Applies a merge patch (RFC 7386 MergePatch); exposed so tests can check what a patch does. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return patch;
  const result: JsonObject = isJsonObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}
