import type { Logger } from './log.ts';
import { logger as componentLogger } from './log.ts';
import { type Clock, realClock } from './queue/clock.ts';

/**
 * ControllerExpectations, after Kubernetes pkg/controller/controller_utils.go (ControllerExpectations
 * wrapped by UIDTrackingControllerExpectations).
 *
 * A controller that creates or deletes objects reads its cache to decide what to do, but the cache
 * learns about its own writes only when the watch events arrive. Until then a second sync would see
 * too few (or too many) objects and act again. So before writing, the controller records how many
 * creations and which deletions it expects; the event handlers count them off as the watch reports
 * them; and the sync acts only when satisfied(key) says the cache has caught up.
 *
 * - Expectations are per controller key ("namespace/name" of the owner).
 * - expectCreations/expectDeletions replace whatever was recorded for the key.
 * - Counts only go down after that (observations, lowerExpectations), and may go below zero.
 * - A record older than the TTL counts as satisfied, so a lost watch event cannot stall the
 *   controller forever; the next sync then acts on the cache and records new expectations.
 * - Deletions are tracked by UID, so a delete observed twice (an update setting deletionTimestamp,
 *   then the delete event) counts once, and only deletions this controller asked for count at all.
 */

/** pkg/controller ExpectationsTimeout: how long to wait for watch events before acting anyway. */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60 * 1000;

export interface ExpectationsSnapshot {
  /** Creations still to be observed (<= 0: none). */
  readonly adds: number;
  /** Deletions still to be observed (<= 0: none). */
  readonly deletes: number;
  /** UIDs whose deletion is expected and not yet observed. */
  readonly pendingDeletions: readonly string[];
  /** Clock time the expectations were recorded at. */
  readonly recordedAt: number;
}

export interface ControllerExpectationsOptions {
  /** Default: EXPECTATIONS_TIMEOUT_MS. */
  ttlMs?: number;
  clock?: Clock;
  /** Debug-level traces of every decision, like upstream's V(4) logs. */
  log?: Logger;
  /** Called whenever satisfied() answers true only because the record expired (a lost watch event). */
  onExpired?: (key: string, expectations: ExpectationsSnapshot) => void;
}

interface ExpectationRecord {
  adds: number;
  deletes: number;
  readonly pendingDeletions: Set<string>;
  readonly recordedAt: number;
}

export class ControllerExpectations {
  readonly #records = new Map<string, ExpectationRecord>();
  readonly #ttlMs: number;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #onExpired: ((key: string, expectations: ExpectationsSnapshot) => void) | undefined;

  constructor(options: ControllerExpectationsOptions = {}) {
    this.#ttlMs = options.ttlMs ?? EXPECTATIONS_TIMEOUT_MS;
    this.#clock = options.clock ?? realClock;
    this.#log = options.log ?? componentLogger({ component: 'expectations' });
    this.#onExpired = options.onExpired;
  }

  /**
   * Whether the controller may act on its cache for `key`: true when every expected creation and
   * deletion has been observed, when the expectations are older than the TTL, or when none were
   * recorded (a new controller, or one that deleted them).
   */
  satisfied(key: string): boolean {
    const record = this.#records.get(key);
    if (record === undefined) {
      this.#log.debug('Controller either never recorded expectations, or the ttl expired', { key });
      return true;
    }
    if (record.adds <= 0 && record.deletes <= 0) {
      this.#log.debug('Controller expectations fulfilled', { key, ...this.#fields(record) });
      return true;
    }
    if (this.#clock.now() - record.recordedAt > this.#ttlMs) {
      this.#log.debug('Controller expectations expired', { key, ...this.#fields(record) });
      this.#onExpired?.(key, snapshot(record));
      return true;
    }
    this.#log.debug('Controller still waiting on expectations', { key, ...this.#fields(record) });
    return false;
  }

  /** Records that `adds` creations are about to be made for `key`, replacing earlier expectations. */
  expectCreations(key: string, adds: number): void {
    this.#set(key, adds, 0, []);
  }

  /**
   * Records that the objects with these UIDs are about to be deleted for `key`, replacing earlier
   * expectations. Duplicate UIDs count once.
   */
  expectDeletions(key: string, uids: readonly string[]): void {
    const existing = this.#records.get(key);
    if (existing && existing.pendingDeletions.size > 0) {
      this.#log.error('Clobbering existing delete keys', { key, uids: [...existing.pendingDeletions] });
    }
    const unique = new Set(uids);
    this.#log.debug('Controller waiting on deletions', { key, uids: [...unique] });
    this.#set(key, 0, unique.size, unique);
  }

  /** An object created for `key` was observed (its add event, or it is the result of adoption). */
  creationObserved(key: string): void {
    this.lowerExpectations(key, 1, 0);
  }

  /**
   * The object with `uid` was observed as deleted (deleted, or deletionTimestamp set) for `key`.
   * Counts only if its deletion was expected and not yet observed; call it also when the delete
   * request failed, since that deletion will never be observed.
   */
  deletionObserved(key: string, uid: string): void {
    const record = this.#records.get(key);
    if (record === undefined || !record.pendingDeletions.delete(uid)) return;
    this.#log.debug('Controller received delete for object', { key, uid });
    this.lowerExpectations(key, 0, 1);
  }

  /** Lowers the counts for `key`, e.g. for creations that failed or were skipped and will never be observed. */
  lowerExpectations(key: string, adds: number, deletes = 0): void {
    const record = this.#records.get(key);
    if (record === undefined) return;
    record.adds -= adds;
    record.deletes -= deletes;
    this.#log.debug('Lowered expectations', { key, ...this.#fields(record) });
  }

  /** Raises the counts for `key` (keeps the recording time). */
  raiseExpectations(key: string, adds: number, deletes = 0): void {
    const record = this.#records.get(key);
    if (record === undefined) return;
    record.adds += adds;
    record.deletes += deletes;
    this.#log.debug('Raised expectations', { key, ...this.#fields(record) });
  }

  /** Forgets `key`, e.g. when the controller object itself is deleted. */
  deleteExpectations(key: string): void {
    this.#records.delete(key);
  }

  /** What is recorded for `key`, for logs and tests. */
  get(key: string): ExpectationsSnapshot | undefined {
    const record = this.#records.get(key);
    return record && snapshot(record);
  }

  #set(key: string, adds: number, deletes: number, uids: Iterable<string>): void {
    const record: ExpectationRecord = {
      adds,
      deletes,
      pendingDeletions: new Set(uids),
      recordedAt: this.#clock.now(),
    };
    this.#records.set(key, record);
    this.#log.debug('Setting expectations', { key, ...this.#fields(record) });
  }

  #fields(record: ExpectationRecord): Record<string, unknown> {
    return { adds: record.adds, deletes: record.deletes, ageMs: this.#clock.now() - record.recordedAt };
  }
}

function snapshot(record: ExpectationRecord): ExpectationsSnapshot {
  return {
    adds: record.adds,
    deletes: record.deletes,
    pendingDeletions: [...record.pendingDeletions],
    recordedAt: record.recordedAt,
  };
}
