// Cutting text to an API field's limit, saying how much was cut. Messages of API errors end up in
// condition messages and Event notes; a webhook may refuse with 40 KiB of text, and a status or
// Event write carrying it whole would itself be refused.

const characterMarker = (cut: number): string => `... (${cut} more characters)`;
const byteMarker = (cut: number): string => `... (${cut} more bytes)`;

/**
 * Code points in `text`, as the apiserver counts a schema's maxLength: UTF-16 units less the
 * surrogate pairs (a lone surrogate counts as one, as `for...of` does). Walks the string without
 * allocating: a hostile tenant's 64 KiB annotation spread into an array of characters was most of the
 * operator's garbage.
 */
export function codePointCount(text: string): number {
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i++) {
    if (isHighSurrogate(text.charCodeAt(i)) && isLowSurrogate(text.charCodeAt(i + 1))) {
      pairs++;
      i++;
    }
  }
  return text.length - pairs;
}

/** Whether `text` has at most `max` code points; at once when its UTF-16 length already says so. */
export function fitsCharacters(text: string, max: number): boolean {
  return text.length <= max || codePointCount(text) <= max;
}

const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/** The first `count` code points of `text` (never half of a surrogate pair). */
function firstCodePoints(text: string, count: number): string {
  let end = 0;
  for (let taken = 0; taken < count && end < text.length; taken++) {
    const pair = isHighSurrogate(text.charCodeAt(end)) && isLowSurrogate(text.charCodeAt(end + 1));
    end += pair ? 2 : 1;
  }
  return text.slice(0, end);
}

/**
 * `text` if it has at most `max` characters (code points, as the apiserver counts a schema's
 * maxLength); otherwise its start and `... (N more characters)`, `max` characters in all.
 */
export function cutToCharacters(text: string, max: number): string {
  if (text.length <= max) return text; // UTF-16 units: never fewer than code points
  const total = codePointCount(text);
  if (total <= max) return text;
  let keep = max - characterMarker(total - max).length;
  while (keep > 0 && keep + characterMarker(total - keep).length > max) keep--;
  if (keep <= 0) return firstCodePoints(text, max);
  return firstCodePoints(text, keep) + characterMarker(total - keep);
}

/** The longest start of `text` of at most `maxBytes` bytes of UTF-8, never splitting a character. */
export function firstUtf8Bytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // bytes[end] is the first byte cut off; while it continues a character, that character started earlier.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/**
 * `text` if it has at most `maxBytes` bytes of UTF-8 (as the apiserver counts an Event's note);
 * otherwise its start and `... (N more bytes)`, at most `maxBytes` bytes in all.
 */
export function cutToBytes(text: string, maxBytes: number): string {
  const total = Buffer.byteLength(text, 'utf8');
  if (total <= maxBytes) return text;
  let room = maxBytes - byteMarker(total - maxBytes).length;
  while (room > 0) {
    const kept = firstUtf8Bytes(text, room);
    const marker = byteMarker(total - Buffer.byteLength(kept, 'utf8'));
    if (Buffer.byteLength(kept, 'utf8') + marker.length <= maxBytes) return kept + marker;
    room--;
  }
  return firstUtf8Bytes(text, maxBytes);
}
