// Concurrent request bodies take turns to be validated: one per event-loop turn, so the synchronous
// part of many writes (zod, the stream-pattern cost check) never adds up inside a single turn.

export class Turns {
  private readonly waiting: Array<() => void> = [];
  private scheduled = false;

  /** Resolves at the caller's turn; what runs synchronously after it has the event loop to itself. */
  wait(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // An immediate queued from inside an immediate runs on the next loop iteration: timers, I/O
    // and decisions are served between two turns.
    setImmediate(() => {
      this.scheduled = false;
      this.waiting.shift()?.();
      if (this.waiting.length > 0) this.schedule();
    });
  }
}
