// Per-account fair queueing for webhook deliveries: each account has its own bounded FIFO and its
// own in-flight cap, and accounts with work take turns, so one account's backlog never delays or
// displaces another's.

export interface FairQueueLimits {
  /** Items waiting across all keys. */
  total: number;
  /** Items waiting for one key. */
  perKey: number;
  /** Items of one key taken and not yet done. */
  perKeyActive: number;
}

/** Why an item was not queued: its own key's share is full, or the whole queue is and its key is the longest. */
export type Refusal = 'key-full' | 'queue-full';

export type PushResult<T> =
  | { accepted: true; evicted?: { key: string; item: T } }
  | { accepted: false; reason: Refusal };

/** A FIFO with O(1) shift that also gives up its newest item. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined as T;
    // Compacting once the dead prefix is half the array keeps shift amortised O(1).
    if (this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  pop(): T | undefined {
    if (this.length === 0) return undefined;
    return this.items.pop();
  }

  drain(): T[] {
    const rest = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return rest;
  }
}

interface Lane<T> {
  waiting: Fifo<T>;
  active: number;
}

export class FairQueue<T> {
  private readonly lanes = new Map<string, Lane<T>>();
  /**
   * Keys that have waiting items and a free in-flight slot, in turn order: a Set iterates in
   * insertion order, so taking the first key and re-adding it at the end is the round robin.
   */
  private readonly ready = new Set<string>();
  private waitingTotal = 0;

  constructor(private readonly limits: FairQueueLimits) {}

  /** Items waiting (not taken) across all keys. */
  get size(): number {
    return this.waitingTotal;
  }

  waitingFor(key: string): number {
    return this.lanes.get(key)?.waiting.length ?? 0;
  }

  activeFor(key: string): number {
    return this.lanes.get(key)?.active ?? 0;
  }

  /**
   * Queues an item. A key at its own share is refused. When the whole queue is full the key
   * holding the most waiting items gives up its newest one, unless that key is the caller's own
   * (or ties with it): a flood only ever displaces the flooder.
   */
  push(key: string, item: T): PushResult<T> {
    const lane = this.lane(key);
    if (lane.waiting.length >= this.limits.perKey) {
      this.forgetIfEmpty(key, lane);
      return { accepted: false, reason: 'key-full' };
    }
    let evicted: { key: string; item: T } | undefined;
    if (this.waitingTotal >= this.limits.total) {
      const longest = this.longestKey();
      const longestLane = longest === undefined ? undefined : this.lanes.get(longest);
      if (longest === undefined || !longestLane || longestLane.waiting.length <= lane.waiting.length) {
        this.forgetIfEmpty(key, lane);
        return { accepted: false, reason: 'queue-full' };
      }
      evicted = { key: longest, item: longestLane.waiting.pop()! };
      this.waitingTotal--;
      this.refresh(longest, longestLane);
    }
    lane.waiting.push(item);
    this.waitingTotal++;
    this.refresh(key, lane);
    return evicted ? { accepted: true, evicted } : { accepted: true };
  }

  /** The next item in turn among keys under their in-flight cap; it counts as active until done(key). */
  take(): { key: string; item: T } | undefined {
    const next = this.ready.values().next();
    if (next.done) return undefined;
    const key = next.value;
    this.ready.delete(key);
    const lane = this.lanes.get(key)!;
    const item = lane.waiting.shift()!;
    this.waitingTotal--;
    lane.active++;
    this.refresh(key, lane);
    return { key, item };
  }

  /** One taken item of `key` has finished. */
  done(key: string): void {
    const lane = this.lanes.get(key);
    if (!lane || lane.active === 0) throw new TypeError(`FairQueue.done: nothing active for ${key}`);
    lane.active--;
    this.refresh(key, lane);
  }

  /** Removes and returns every waiting item (in-flight counts are kept until their done()). */
  clear(): T[] {
    const all: T[] = [];
    for (const [key, lane] of this.lanes) {
      all.push(...lane.waiting.drain());
      this.refresh(key, lane);
    }
    this.waitingTotal = 0;
    return all;
  }

  private lane(key: string): Lane<T> {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { waiting: new Fifo<T>(), active: 0 };
      this.lanes.set(key, lane);
    }
    return lane;
  }

  /** Keeps `ready` and the lane map in step with a lane's counts. */
  private refresh(key: string, lane: Lane<T>): void {
    const eligible = lane.waiting.length > 0 && lane.active < this.limits.perKeyActive;
    if (!eligible) this.ready.delete(key);
    else if (!this.ready.has(key)) this.ready.add(key);
    this.forgetIfEmpty(key, lane);
  }

  private forgetIfEmpty(key: string, lane: Lane<T>): void {
    if (lane.waiting.length === 0 && lane.active === 0) this.lanes.delete(key);
  }

  /** Only called when the whole queue is full, so the scan is over keys that hold work. */
  private longestKey(): string | undefined {
    let best: string | undefined;
    let most = -1;
    for (const [key, lane] of this.lanes) {
      if (lane.waiting.length > most) {
        most = lane.waiting.length;
        best = key;
      }
    }
    return best;
  }
}
