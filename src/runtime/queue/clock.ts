/**
 * Time source and timer scheduling for the work queue and rate limiters, injectable so tests can
 * drive time by hand (FakeClock) instead of sleeping.
 */

/** A scheduled callback; pass it to Clock.clearTimeout to cancel it. */
export interface ClockTimer {
  readonly dueAt: number;
}

export interface TimerOptions {
  /**
   * Keep the process alive while the timer is pending. Off by default: queue timers are background
   * housekeeping and must never stop a process from exiting.
   */
  keepAlive?: boolean;
}

export interface Clock {
  /** Milliseconds on a monotonic scale; only differences between two readings are meaningful. */
  now(): number;
  setTimeout(callback: () => void, delayMs: number, options?: TimerOptions): ClockTimer;
  /** Cancels a pending timer; does nothing for a timer that already fired or was cancelled. */
  clearTimeout(timer: ClockTimer): void;
}

/** Node refuses delays above 2^31-1 ms (it fires them after 1 ms instead), so longer waits are chained. */
const MAX_NODE_TIMER_DELAY_MS = 2 ** 31 - 1;

class RealTimer implements ClockTimer {
  readonly dueAt: number;
  handle: NodeJS.Timeout | undefined;

  constructor(dueAt: number) {
    this.dueAt = dueAt;
  }
}

export class RealClock implements Clock {
  now(): number {
    return performance.now();
  }

  setTimeout(callback: () => void, delayMs: number, options: TimerOptions = {}): ClockTimer {
    const timer = new RealTimer(this.now() + Math.max(0, delayMs));
    const arm = (): void => {
      const remaining = Math.max(0, timer.dueAt - this.now());
      timer.handle = setTimeout(
        () => {
          if (this.now() < timer.dueAt) {
            arm();
            return;
          }
          timer.handle = undefined;
          callback();
        },
        Math.min(remaining, MAX_NODE_TIMER_DELAY_MS),
      );
      if (!options.keepAlive) timer.handle.unref();
    };
    arm();
    return timer;
  }

  clearTimeout(timer: ClockTimer): void {
    if (timer instanceof RealTimer && timer.handle !== undefined) {
      clearTimeout(timer.handle);
      timer.handle = undefined;
    }
  }
}

export const realClock: Clock = new RealClock();

class FakeTimer implements ClockTimer {
  readonly dueAt: number;
  readonly sequence: number;
  readonly callback: () => void;

  constructor(dueAt: number, sequence: number, callback: () => void) {
    this.dueAt = dueAt;
    this.sequence = sequence;
    this.callback = callback;
  }
}

/**
 * @internal A test double: a clock that only moves when told to. advance() fires every timer that falls due, in due-time order,
 * synchronously, with now() reading each timer's due time while its callback runs. Promise
 * continuations triggered by those callbacks still need a microtask/macrotask turn to run.
 */
export class FakeClock implements Clock {
  #now: number;
  #nextSequence = 0;
  readonly #pending = new Set<FakeTimer>();

  constructor(startMs = 0) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, delayMs: number): ClockTimer {
    const timer = new FakeTimer(this.#now + Math.max(0, delayMs), this.#nextSequence++, callback);
    this.#pending.add(timer);
    return timer;
  }

  clearTimeout(timer: ClockTimer): void {
    if (timer instanceof FakeTimer) this.#pending.delete(timer);
  }

  /** Moves time forward by ms, firing due timers (including ones scheduled by fired callbacks). */
  advance(ms: number): void {
    if (ms < 0) throw new RangeError('FakeClock cannot go backwards');
    const target = this.#now + ms;
    for (let timer = this.#nextDue(target); timer; timer = this.#nextDue(target)) {
      this.#pending.delete(timer);
      this.#now = Math.max(this.#now, timer.dueAt);
      timer.callback();
    }
    this.#now = target;
  }

  /** Number of timers scheduled and not yet fired or cancelled. */
  pendingTimers(): number {
    return this.#pending.size;
  }

  #nextDue(limit: number): FakeTimer | undefined {
    let next: FakeTimer | undefined;
    for (const timer of this.#pending) {
      if (timer.dueAt > limit) continue;
      if (
        !next ||
        timer.dueAt < next.dueAt ||
        (timer.dueAt === next.dueAt && timer.sequence < next.sequence)
      ) {
        next = timer;
      }
    }
    return next;
  }
}
