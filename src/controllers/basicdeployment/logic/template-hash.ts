import { createHash } from 'node:crypto';
import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import { canonicalJson } from './canonical-json.ts';

const FNV32_OFFSET_BASIS = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

/**
 * Upstream's rand.SafeEncodeString alphabet: no vowels (no accidental words) and no characters
 * that look alike (0/o, 1/l), so the result is always a valid label value.
 */
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** FNV-1a, 32 bit, over raw bytes; returns an unsigned 32-bit integer. */
export function fnv1a32(bytes: Uint8Array, seed: number = FNV32_OFFSET_BASIS): number {
  let hash = seed >>> 0;
  for (const byte of bytes) {
    hash ^= byte;
    hash = Math.imul(hash, FNV32_PRIME) >>> 0;
  }
  return hash;
}

/** Maps every character onto SAFE_ALPHABET by code point, exactly like upstream SafeEncodeString. */
export function safeEncodeString(text: string): string {
  let encoded = '';
  for (const char of text) encoded += SAFE_ALPHABET[char.codePointAt(0)! % SAFE_ALPHABET.length];
  return encoded;
}

/**
 * The pod-template-hash of a template, in the spirit of upstream controller.ComputeHash: FNV-1a
 * over a canonical serialization of the template, then the collision count mixed in as 8 bytes
 * (uint32 little endian, zero padded) when given, printed in decimal and safe-encoded.
 * Bumping collisionCount yields a new name when a replica set name is already taken.
 */
export function computeTemplateHash(template: V1PodTemplateSpec, collisionCount?: number): string {
  let hash = templateFnv(template);
  if (collisionCount !== undefined) {
    const collisionBytes = new Uint8Array(8);
    new DataView(collisionBytes.buffer).setUint32(0, collisionCount >>> 0, true);
    hash = fnv1a32(collisionBytes, hash);
  }
  return safeEncodeString(String(hash));
}

/**
 * True when two pod templates are the same apart from the value of the hash label (upstream
 * EqualIgnoreHash): a replica set's template carries the label, the deployment's does not.
 */
export function templatesEqualIgnoringHash(
  a: V1PodTemplateSpec,
  b: V1PodTemplateSpec,
  hashLabelKey: string,
): boolean {
  return digestWithoutLabel(a, hashLabelKey) === digestWithoutLabel(b, hashLabelKey);
}

// The cache's objects are deep-frozen and never change, so what is worked out from a frozen template
// is kept with it (and goes with it): a deployment's sync compares its template with every set's, and
// a tenant's template of 256 KiB serialized again on each comparison held the operator's event loop
// for tens of milliseconds at a time. A template that is not frozen is worked out every time.
const fnvOfFrozen = new WeakMap<object, number>();
const digestsOfFrozen = new WeakMap<object, Map<string, string>>();

function templateFnv(template: V1PodTemplateSpec): number {
  const known = fnvOfFrozen.get(template);
  if (known !== undefined) return known;
  const hash = fnv1a32(new TextEncoder().encode(canonicalJson(template)));
  if (Object.isFrozen(template)) fnvOfFrozen.set(template, hash);
  return hash;
}

/** A SHA-256 of the canonical JSON of the template without the label: equal digests, equal templates. */
function digestWithoutLabel(template: V1PodTemplateSpec, labelKey: string): string {
  const known = digestsOfFrozen.get(template)?.get(labelKey);
  if (known !== undefined) return known;
  const digest = createHash('sha256')
    .update(canonicalJson(withoutLabel(template, labelKey)))
    .digest('base64');
  if (Object.isFrozen(template)) {
    const byLabel = digestsOfFrozen.get(template) ?? new Map<string, string>();
    digestsOfFrozen.set(template, byLabel.set(labelKey, digest));
  }
  return digest;
}

function withoutLabel(template: V1PodTemplateSpec, labelKey: string): V1PodTemplateSpec {
  const labels = template.metadata?.labels;
  if (labels === undefined || !(labelKey in labels)) return template;
  const { [labelKey]: _removed, ...rest } = labels;
  // An emptied label map equals no label map, as in upstream's semantic equality.
  const remaining = Object.keys(rest).length > 0 ? rest : undefined;
  return { ...template, metadata: { ...template.metadata, labels: remaining } };
}
