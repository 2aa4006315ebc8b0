/**
 * Failed authentications per client address, in fixed windows: past `max` in a window the
 * address is refused (429) before its key is even hashed and looked up. Its own budget, far
 * below the request limits: a client with a valid key never fails, one guessing keys does
 * nothing else. In memory, per process, like the other rate-limit counters.
 */
export class AuthFailureBudget {
  private readonly windows = new Map<string, { failures: number; resetAt: number }>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    /** Addresses tracked at once: the oldest window is dropped past it. */
    private readonly maxAddresses = 10_000,
  ) {}

  /** Seconds `address` must wait before authenticating again, or 0 when it may try. */
  retryAfter(address: string): number {
    if (this.max <= 0) return 0;
    const window = this.windows.get(address);
    if (!window) return 0;
    const now = this.now();
    if (now >= window.resetAt) {
      this.windows.delete(address);
      return 0;
    }
    return window.failures >= this.max ? Math.max(1, Math.ceil((window.resetAt - now) / 1000)) : 0;
  }

  /** Counts a failed authentication from `address`. */
  fail(address: string): void {
    if (this.max <= 0) return;
    const now = this.now();
    const window = this.windows.get(address);
    if (window && now < window.resetAt) {
      window.failures++;
      return;
    }
    this.windows.delete(address);
    this.windows.set(address, { failures: 1, resetAt: now + this.windowMs });
    if (this.windows.size > this.maxAddresses) this.windows.delete(this.windows.keys().next().value!);
  }

  get limit(): number {
    return this.max;
  }
}
