// What the plugin prints comes from the cluster: names, reasons, messages and events anyone who can
// write an object or an Event chose. A terminal acts on control characters and escape sequences in
// it (move the cursor, rewrite lines, set the title, write the clipboard), so none reach it.

/**
 * ESC and C1 sequences, whole: strings (OSC, DCS, SOS, PM, APC) up to their terminator, or the end
 * of the line when there is none; CSI with its parameters; any other escape with its intermediates
 * and final byte.
 */
const SEQUENCES =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
  /(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?|(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|\x1b[\x20-\x2f]*[\x30-\x7e]?/g;
/** C0 but tab and newline, DEL, C1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** Text without escape sequences or control characters other than tab and newline. */
export function printable(text: string): string {
  return text.replace(SEQUENCES, '').replace(CONTROLS, '');
}

/**
 * JSON as `JSON.stringify` writes it, with DEL and C1 escaped too (it escapes only C0): the same
 * values, nothing a terminal acts on.
 */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    /[\x7f-\x9f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
