import { ftruncateSync, readSync, writeSync } from 'node:fs';
import { onPath } from './errors.ts';

/** The granularity of holes: a block of this many zero bytes is not written. */
export const BLOCK_SIZE = 4096;

const ZEROS = Buffer.alloc(BLOCK_SIZE);

/** A file descriptor and the path it was opened at, for errors. */
export interface OpenFile {
  readonly fd: number;
  readonly path: Buffer;
}

/**
 * Copies the content of `from` into the new, empty file `to`, writing only the blocks that are not
 * all zeros and then setting the size: holes stay holes, and runs of zeros in a file that had none
 * become holes (same content, fewer blocks). Node cannot ask where the holes are (no SEEK_DATA),
 * so every byte is read. `onCopied` learns of the bytes of each chunk once they are written.
 */
export function copyContent(
  from: OpenFile,
  to: OpenFile,
  chunk: Buffer,
  onCopied: (bytes: number) => void,
): void {
  let position = 0;
  for (;;) {
    const bytesRead = onPath(from.path, 'read', () => readSync(from.fd, chunk, 0, chunk.length, position));
    if (bytesRead === 0) break;
    writeDataBlocks(to, chunk.subarray(0, bytesRead), position);
    position += bytesRead;
    onCopied(bytesRead);
  }
  onPath(to.path, 'ftruncate', () => ftruncateSync(to.fd, position));
}

/** Writes each run of blocks of `data` that are not all zeros at its place in the file. */
function writeDataBlocks(to: OpenFile, data: Buffer, position: number): void {
  let runStart = -1;
  for (let offset = 0; offset < data.length; offset += BLOCK_SIZE) {
    const end = Math.min(offset + BLOCK_SIZE, data.length);
    if (data.compare(ZEROS, 0, end - offset, offset, end) !== 0) {
      if (runStart < 0) runStart = offset;
    } else if (runStart >= 0) {
      writeAll(to, data.subarray(runStart, offset), position + runStart);
      runStart = -1;
    }
  }
  if (runStart >= 0) writeAll(to, data.subarray(runStart), position + runStart);
}

function writeAll(to: OpenFile, data: Buffer, position: number): void {
  let done = 0;
  while (done < data.length) {
    done += onPath(to.path, 'write', () => writeSync(to.fd, data, done, data.length - done, position + done));
  }
}
