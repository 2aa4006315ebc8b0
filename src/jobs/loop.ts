import { randomUUID } from 'node:crypto';
import type { TaskRow } from '../db/schema.js';
import type { SuccessRecord, TaskStore } from './store.js';

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** What running a task produced: the post to insert, committed together with the task's success. */
export type TaskWork = (task: TaskRow, signal: AbortSignal) => Promise<SuccessRecord>;

export interface JobLoopOptions {
  pollMs: number;
  concurrency: number;
  leaseMs: number;
  shutdownTimeoutMs: number;
  /** First retry delay; each further attempt doubles it (capped), with jitter. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  clock?: Clock;
  random?: () => number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

const REFILL_DELAY_MS = 5;

/** Errors that retrying cannot fix (an unknown model, say) carry `permanent: true`. */
const isPermanent = (error: unknown) => (error as { permanent?: unknown })?.permanent === true;

/**
 * The in-process job loop: polls for due tasks, claims them atomically up to the concurrency
 * limit, keeps their leases alive, and retries failures with exponential backoff and jitter.
 */
export class JobLoop {
  readonly owner = `worker-${randomUUID()}`;
  private readonly running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private timer: NodeJS.Timeout | null = null;
  private refillTimer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private stopping = false;
  private readonly clock: Clock;
  private readonly random: () => number;

  constructor(
    private readonly store: TaskStore,
    private readonly work: TaskWork,
    private readonly options: JobLoopOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
  }

  /**
   * Starts polling. Tasks an earlier process of this database left running (it crashed) go
   * back to pending at once rather than when their lease would run out.
   */
  start(): void {
    const released = this.store.release(this.clock.now(), null, 'Interrupted: the service stopped while the task ran');
    if (released > 0) this.options.log.warn({ tasks: released }, 'returned tasks left running by an earlier process');
    // Ticks also renew leases, so they must come well within a lease.
    const interval = Math.max(10, Math.min(this.options.pollMs, Math.floor(this.options.leaseMs / 3)));
    this.timer = setInterval(() => void this.tick(), interval);
    this.timer.unref();
    void this.tick();
  }

  get activeCount(): number {
    return this.running.size;
  }

  /** One poll: renew leases, reclaim expired ones, claim and start due tasks. Never overlaps itself. */
  tick(): Promise<void> {
    this.ticking ??= Promise.resolve()
      .then(() => this.poll())
      .catch((error) => this.options.log.error({ err: error }, 'job loop poll failed'))
      .finally(() => (this.ticking = null));
    return this.ticking;
  }

  private poll(): void {
    if (this.stopping) return;
    const now = this.clock.now();
    if (this.running.size) this.store.heartbeat(this.owner, [...this.running.keys()], now, this.options.leaseMs);
    const reclaimed = this.store.release(now, now, 'Lease expired: the worker running it stopped answering');
    if (reclaimed > 0) this.options.log.warn({ tasks: reclaimed }, 'reclaimed tasks with expired leases');
    this.fillSlots(now);
  }

  private fillSlots(now: number): void {
    for (const task of this.store.claim(this.owner, this.options.concurrency - this.running.size, now, this.options.leaseMs)) this.launch(task);
  }

  /**
   * A freed slot takes the next due task within a few milliseconds rather than at the next
   * poll (which alone renews leases and reclaims expired ones). Through a short timer, shared
   * by the tasks finishing meanwhile: refilling at once would chain quick tasks back to back
   * and starve requests of the event loop.
   */
  private refillSoon(): void {
    if (this.stopping || this.refillTimer) return;
    this.refillTimer = setTimeout(() => {
      this.refillTimer = null;
      if (this.stopping) return;
      try {
        this.fillSlots(this.clock.now());
      } catch (error) {
        this.options.log.error({ err: error }, 'job loop refill failed');
      }
    }, REFILL_DELAY_MS);
  }

  private launch(task: TaskRow): void {
    const controller = new AbortController();
    const done = this.execute(task, controller.signal).finally(() => {
      this.running.delete(task.id);
      this.refillSoon();
    });
    this.running.set(task.id, { controller, done });
  }

  private async execute(task: TaskRow, signal: AbortSignal): Promise<void> {
    try {
      const record = await this.work(task, signal);
      if (signal.aborted) return; // shutting down: stop() gives the task back
      const post = this.store.succeed(this.owner, task.id, record, this.clock.now());
      if (post) this.options.log.info({ taskId: task.id, postId: post.id }, 'task succeeded');
      else this.options.log.warn({ taskId: task.id }, 'task finished after losing its lease; its result was discarded');
    } catch (error) {
      if (signal.aborted) return;
      const message = error instanceof Error ? error.message : String(error);
      const outcome = this.store.fail(this.owner, task, message, isPermanent(error), this.clock.now() + this.backoffMs(task.attempts), this.clock.now());
      this.options.log.warn({ taskId: task.id, attempt: task.attempts, outcome, reason: message }, 'task attempt failed');
    }
  }

  /** Delay before retry number `attempt`: base * 2^(attempt-1), capped, scaled by a jitter in [0.5, 1). */
  backoffMs(attempt: number): number {
    const base = this.options.backoffBaseMs ?? 2000;
    const ceiling = Math.min(this.options.backoffMaxMs ?? 300_000, base * 2 ** Math.max(0, attempt - 1));
    return Math.round(ceiling * (0.5 + this.random() / 2));
  }

  /** Resolves when no task is running (tests and benchmarks wait on states, not on sleeps). */
  async whenIdle(): Promise<void> {
    while (this.ticking || this.running.size) {
      await this.ticking;
      await Promise.all([...this.running.values()].map((r) => r.done));
    }
  }

  /**
   * Graceful stop: claim nothing more, let running tasks finish for up to the shutdown
   * timeout, then abort the rest and return them to pending for the next start.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    if (this.refillTimer) clearTimeout(this.refillTimer);
    await this.ticking;
    const all = [...this.running.values()].map((r) => r.done);
    let timeout: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timeout = setTimeout(() => resolve('timeout'), this.options.shutdownTimeoutMs)));
    const result = await Promise.race([Promise.all(all).then(() => 'done' as const), timedOut]);
    clearTimeout(timeout);
    if (result === 'timeout') {
      const unfinished = [...this.running.keys()];
      for (const { controller } of this.running.values()) controller.abort(new Error('service shutting down'));
      for (const id of unfinished) this.store.giveBack(this.owner, id, this.clock.now());
      this.options.log.warn({ tasks: unfinished.length }, 'returned unfinished tasks to pending at shutdown');
      await Promise.allSettled(all);
    }
  }
}
