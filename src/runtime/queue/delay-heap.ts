interface Entry<T> {
  readonly item: T;
  readyAt: number;
  /** Breaks readyAt ties in insertion order, so equal delays come out first-in first-out. */
  readonly sequence: number;
  index: number;
}

/**
 * Items waiting to be added to the queue, ordered by the time they become ready (a binary min-heap).
 * Each item appears at most once; scheduling an item that is already waiting keeps the earlier time.
 */
export class DelayHeap<T> {
  readonly #heap: Entry<T>[] = [];
  readonly #byItem = new Map<T, Entry<T>>();
  #nextSequence = 0;

  get size(): number {
    return this.#heap.length;
  }

  /** Schedules `item` at `readyAt`, or moves it earlier if it already waits for a later time. */
  schedule(item: T, readyAt: number): void {
    const existing = this.#byItem.get(item);
    if (existing) {
      if (readyAt < existing.readyAt) {
        existing.readyAt = readyAt;
        this.#siftUp(existing.index);
      }
      return;
    }
    const entry: Entry<T> = { item, readyAt, sequence: this.#nextSequence++, index: this.#heap.length };
    this.#heap.push(entry);
    this.#byItem.set(item, entry);
    this.#siftUp(entry.index);
  }

  /** The earliest ready time, or undefined when nothing waits. */
  nextReadyAt(): number | undefined {
    return this.#heap[0]?.readyAt;
  }

  /** Removes and returns, earliest first, every item whose time has come. */
  popReady(now: number): T[] {
    const ready: T[] = [];
    for (let head = this.#heap[0]; head && head.readyAt <= now; head = this.#heap[0]) {
      this.#removeHead();
      ready.push(head.item);
    }
    return ready;
  }

  clear(): void {
    this.#heap.length = 0;
    this.#byItem.clear();
  }

  #removeHead(): void {
    const head = this.#heap[0]!;
    const last = this.#heap.pop()!;
    this.#byItem.delete(head.item);
    if (last !== head) {
      last.index = 0;
      this.#heap[0] = last;
      this.#siftDown(0);
    }
  }

  #before(a: Entry<T>, b: Entry<T>): boolean {
    return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.sequence < b.sequence);
  }

  #swap(i: number, j: number): void {
    const a = this.#heap[i]!;
    const b = this.#heap[j]!;
    this.#heap[i] = b;
    this.#heap[j] = a;
    a.index = j;
    b.index = i;
  }

  #siftUp(index: number): void {
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#before(this.#heap[i]!, this.#heap[parent]!)) return;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #siftDown(index: number): void {
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < this.#heap.length && this.#before(this.#heap[left]!, this.#heap[smallest]!)) smallest = left;
      if (right < this.#heap.length && this.#before(this.#heap[right]!, this.#heap[smallest]!))
        smallest = right;
      if (smallest === i) return;
      this.#swap(i, smallest);
      i = smallest;
    }
  }
}
