const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A path's raw bytes as one printable line: UTF-8 shows as text, control characters (a newline in a
 * name) and backslashes are escaped, and bytes that are not UTF-8 show as \xNN.
 */
export function displayPath(path: Buffer): string {
  let text: string;
  try {
    text = utf8.decode(path);
  } catch {
    return Array.from(path, (byte) => (byte < 0x80 ? escaped(byte) : hexEscape(byte))).join('');
  }
  let out = '';
  for (const char of text) out += escaped(char.codePointAt(0)!);
  return out;
}

/** A code point as itself, or escaped if it is a backslash or a control character. */
function escaped(codePoint: number): string {
  if (codePoint === 0x5c) return '\\\\';
  if (codePoint < 0x20 || codePoint === 0x7f) return hexEscape(codePoint);
  return String.fromCodePoint(codePoint);
}

function hexEscape(byte: number): string {
  return `\\x${byte.toString(16).padStart(2, '0')}`;
}
