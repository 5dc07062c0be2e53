import { closeSync, constants, openSync, writeSync } from 'node:fs';
import type { MoverError } from './errors.ts';
import type { CopyReport } from './run.ts';

/** Kubernetes keeps at most 4096 bytes of a termination message. */
export const MAX_FAILURE_BYTES = 4000;

/** The line of a successful copy, JSON (about 300 bytes, whatever the tree). */
export function successLine(report: CopyReport): string {
  return JSON.stringify({
    v: 1,
    source: report.source,
    target: report.target,
    copyMs: report.copyMs,
    manifestMs: report.manifestMs,
  });
}

/** `<Reason>: <message>` on one line, cut to MAX_FAILURE_BYTES without splitting a character. */
export function failureLine(error: MoverError): string {
  const line = `${error.reason}: ${error.message}`.replace(/[\r\n]+/g, ' ');
  const bytes = Buffer.from(line);
  if (bytes.length <= MAX_FAILURE_BYTES) return line;
  let end = MAX_FAILURE_BYTES;
  // Back up to the first byte of a UTF-8 sequence (continuation bytes are 10xxxxxx).
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString();
}

/**
 * Writes the line the kubelet reports as the container's termination message. The kubelet makes
 * the default file; `create` makes a file given on the command line. Without the file (the mover
 * run by hand) the line still goes to stdout or stderr, so this only warns.
 */
export function writeTerminationLog(file: string, line: string, create: boolean): void {
  try {
    const fd = openSync(file, create ? 'w' : constants.O_WRONLY | constants.O_TRUNC);
    try {
      writeSync(fd, line);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    process.stderr.write(`warning: cannot write the termination log ${file}: ${String(error)}\n`);
  }
}
