/**
 * Runs tasks at most `concurrency` at a time in all and one at a time per key (a site), the
 * keys waiting served in turn: a site that uploads a hundred images waits behind itself, never
 * in front of another site's one.
 */
export class FairQueue {
  private running = 0;
  private readonly busy = new Set<string>();
  /** Keys with tasks waiting, in the order they are to be served. */
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(private readonly concurrency: number) {}

  /** Tasks running or waiting (tests, the bench). */
  get size(): number {
    let waiting = 0;
    for (const queue of this.waiting.values()) waiting += queue.length;
    return this.running + waiting;
  }

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    await this.turn(key);
    try {
      return await task();
    } finally {
      this.running--;
      this.busy.delete(key);
      this.next();
    }
  }

  private turn(key: string): Promise<void> {
    if (this.running < this.concurrency && !this.busy.has(key) && !this.waiting.has(key)) {
      this.start(key);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const queue = this.waiting.get(key);
      if (queue) queue.push(resolve);
      else this.waiting.set(key, [resolve]);
    });
  }

  private start(key: string): void {
    this.running++;
    this.busy.add(key);
  }

  private next(): void {
    for (const [key, queue] of this.waiting) {
      if (this.running >= this.concurrency) return;
      if (this.busy.has(key)) continue;
      const resolve = queue.shift()!;
      // Served: the key goes to the back of the line.
      this.waiting.delete(key);
      if (queue.length > 0) this.waiting.set(key, queue);
      this.start(key);
      resolve();
    }
  }
}
