import type { Logger } from '../log.ts';

/**
 * What the controllers leave of --graceful-shutdown-timeout for the steps after them (lease release,
 * event drain, cache stop): a quarter of it, at most 2 s.
 */
export function handoverReserveMs(timeoutMs: number): number {
  return Math.min(2000, timeoutMs / 4);
}

/**
 * One deadline for every step of a graceful stop (controller-runtime's GracefulShutdownTimeout): each
 * step is awaited for what is left of it, so the whole stop ends within the timeout.
 */
export class ShutdownDeadline {
  readonly #at: number;
  readonly #timeoutMs: number;
  readonly #log: Logger;

  constructor(timeoutMs: number, log: Logger) {
    this.#timeoutMs = timeoutMs;
    this.#at = Date.now() + timeoutMs;
    this.#log = log;
  }

  /** Awaits `work` until the deadline; false (and a warning) when the deadline came first. */
  async wait(step: string, work: Promise<unknown>): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), Math.max(0, this.#at - Date.now()));
    });
    try {
      const finished = await Promise.race([work.then(() => true as const), expired]);
      if (!finished) {
        this.#log.warn('shutdown: graceful shutdown timeout reached', {
          step,
          timeoutMs: this.#timeoutMs,
        });
      }
      return finished;
    } finally {
      clearTimeout(timer);
    }
  }
}
