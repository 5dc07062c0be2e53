import { getSystemErrorMessage } from 'node:util';
import { displayPath } from './display.ts';

/** The first word of the termination log on failure; the operator reads it as the copy's reason. */
export type FailureReason = 'Ownership' | 'SpecialFile' | 'NoSpace' | 'Mismatch' | 'Usage' | 'IOError';

/** A failure the mover reports as `<reason>: <message>`. */
export class MoverError extends Error {
  readonly reason: FailureReason;

  constructor(reason: FailureReason, message: string) {
    super(message);
    this.name = 'MoverError';
    this.reason = reason;
  }
}

/**
 * A failed system call on `path`. Node's own errors carry the path as a string, decoded lossily
 * from the bytes, so the mover keeps the Buffer it called with.
 */
export class FsError extends MoverError {
  readonly code: string;
  readonly path: Buffer;

  constructor(code: string, syscall: string, path: Buffer, description: string) {
    super('IOError', `${code} on ${syscall} ${displayPath(path)}: ${description}`);
    this.name = 'FsError';
    this.code = code;
    this.path = path;
  }
}

/** A socket, FIFO or device: Node can neither read nor create them. */
export class SpecialFileError extends MoverError {
  readonly path: Buffer;

  constructor(path: Buffer, kind: string) {
    super('SpecialFile', `${displayPath(path)} is a ${kind}, which the copy cannot recreate`);
    this.name = 'SpecialFileError';
    this.path = path;
  }
}

interface ErrnoLike {
  code: string;
  errno?: number;
}

function isErrno(error: unknown): error is Error & ErrnoLike {
  return error instanceof Error && typeof (error as Partial<ErrnoLike>).code === 'string';
}

/** Runs one file system call on `path`, turning its errno failure into an FsError for that path. */
export function onPath<T>(path: Buffer, syscall: string, call: () => T): T {
  try {
    return call();
  } catch (error) {
    if (!isErrno(error)) throw error;
    const description = typeof error.errno === 'number' ? getSystemErrorMessage(error.errno) : error.message;
    throw new FsError(error.code, syscall, path, description);
  }
}

/** Any error as a MoverError: ours as they are, anything else (a bug, an unknown failure) as IOError. */
export function asMoverError(error: unknown): MoverError {
  if (error instanceof MoverError) return error;
  if (error instanceof Error) return new MoverError('IOError', error.message);
  return new MoverError('IOError', String(error));
}
