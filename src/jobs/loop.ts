import { randomUUID } from 'node:crypto';
import type { Executor } from '../db/client.js';
import { isDatabaseBusy, isStorageFull, isTransientStorageError } from '../errors.js';
import type { Job, JobQueue, JobRow } from './queue.js';

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * What a kind of job does. `run` does the slow part (a generation, a delivery) outside any
 * transaction and may be cancelled through `signal`; `complete` commits its effect in the
 * transaction that marks the job succeeded, and returns what the job keeps as its result.
 * An error with `permanent: true` fails the job at once instead of retrying it.
 */
export interface JobHandler<Payload = never, Result = unknown> {
  readonly kind: string;
  run(payload: Payload, signal: AbortSignal, job: Job<Payload>): Promise<Result>;
  /** Returns what the job keeps as its result (JSON). */
  complete(tx: Executor, result: Result, job: Job<Payload>): unknown;
}

/** How a job ended for good: told to settle listeners inside the transaction that records it. */
export type JobOutcome = { status: 'succeeded'; result: unknown } | { status: 'failed'; error: string };
export type JobSettledListener = (tx: Executor, job: JobRow, outcome: JobOutcome) => void;

// Handlers of every kind sit in one map; each sees only payloads of its own kind.
type AnyHandler = JobHandler<any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

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
/** Errors saying what the job needs is unavailable (a generator server down) carry `unavailable: true`. */
const isUnavailable = (error: unknown) => (error as { unavailable?: unknown })?.unavailable === true;

/** The longest a job waits between two looks at an unavailable dependency. */
export const WAIT_CEILING_MS = 15 * 60_000;

/** The longest the loop waits between two tries while the disk is full or the database locked. */
export const STORAGE_WAIT_CEILING_MS = 60_000;

/**
 * `stopped`: not started (or stopped); `starting`: its start failed (the database was locked,
 * say) and is retried; `running`; `waiting`: running, but claiming nothing until the disk has
 * space or the database is unlocked again; `stopping`: claims nothing more, finishing its jobs.
 */
export type JobLoopState = 'stopped' | 'starting' | 'running' | 'waiting' | 'stopping';

export interface JobLoopStatus {
  state: JobLoopState;
  active: number;
  /** Why the loop waits (or retries its start), and when it tries again. */
  waiting: { reason: 'storage-full' | 'database-busy' | 'error'; retryAt: Date; message: string } | null;
}

/**
 * The in-process job loop: polls for due jobs, claims them atomically up to the concurrency
 * limit, runs each with its kind's handler, keeps their leases alive, and retries failures
 * with exponential backoff and jitter.
 */
export class JobLoop {
  readonly owner = `worker-${randomUUID()}`;
  private readonly running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private timer: NodeJS.Timeout | null = null;
  private refillTimer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private stopping = false;
  private started = false;
  private startTimer: NodeJS.Timeout | null = null;
  /** Set while the disk is full or the database locked (or the start failed): nothing is claimed before `retryAt`. */
  private blocked: { reason: 'storage-full' | 'database-busy' | 'error'; retryAt: number; attempt: number; message: string } | null = null;
  /** Jobs whose outcome could not be saved (full disk): given back to pending once writes work again. */
  private readonly heldBack = new Set<string>();
  private readonly clock: Clock;
  private readonly random: () => number;

  private readonly handlers = new Map<string, AnyHandler>();
  private readonly settledListeners: JobSettledListener[] = [];

  constructor(
    private readonly queue: JobQueue,
    handlers: readonly AnyHandler[],
    private readonly options: JobLoopOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    for (const handler of handlers) this.register(handler);
  }

  /** Calls `listener` inside the transaction in which any job succeeds or fails for good. */
  onSettled(listener: JobSettledListener): void {
    this.settledListeners.push(listener);
  }

  private settled(tx: Executor, job: JobRow, outcome: JobOutcome): void {
    for (const listener of this.settledListeners) listener(tx, job, outcome);
  }

  /** Adds the handler of a kind of job; a kind has one handler. */
  register(handler: AnyHandler): void {
    if (this.handlers.has(handler.kind)) throw new Error(`A handler for job kind "${handler.kind}" is already registered`);
    this.handlers.set(handler.kind, handler);
  }

  /**
   * Starts polling. Tasks an earlier process of this database left running (it crashed) go
   * back to pending at once rather than when their lease would run out. Never throws: when
   * that first write fails (a database locked by another program, a full disk), the start
   * is retried with a growing delay and `status()` says `starting` meanwhile.
   */
  start(): void {
    if (this.started || this.stopping) return;
    if (this.startTimer) clearTimeout(this.startTimer);
    this.startTimer = null;
    try {
      const released = this.queue.release(this.clock.now(), null, 'Interrupted: the service stopped while the job ran');
      if (released > 0) this.options.log.warn({ jobs: released }, 'returned jobs left running by an earlier process');
    } catch (error) {
      const delay = this.block(error);
      this.options.log.warn({ err: error, retryInMs: delay }, 'job loop could not start; retrying');
      this.startTimer = setTimeout(() => this.start(), delay);
      this.startTimer.unref();
      return;
    }
    this.started = true;
    this.blocked = null;
    // Ticks also renew leases, so they must come well within a lease.
    const interval = Math.max(10, Math.min(this.options.pollMs, Math.floor(this.options.leaseMs / 3)));
    this.timer = setInterval(() => void this.tick(), interval);
    this.timer.unref();
    void this.tick();
  }

  get activeCount(): number {
    return this.running.size;
  }

  status(): JobLoopStatus {
    const blocked = this.blocked;
    let state: JobLoopState;
    if (this.stopping) state = 'stopping';
    else if (!this.started) state = this.startTimer ? 'starting' : 'stopped';
    else state = blocked ? 'waiting' : 'running';
    return {
      state,
      active: this.running.size,
      waiting: blocked ? { reason: blocked.reason, retryAt: new Date(blocked.retryAt), message: blocked.message } : null,
    };
  }

  /**
   * Claims nothing more (shutdown's first step, before in-flight requests are waited for):
   * running jobs go on, and stop() then waits for them.
   */
  stopClaiming(): void {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    if (this.refillTimer) clearTimeout(this.refillTimer);
    if (this.startTimer) clearTimeout(this.startTimer);
    this.timer = null;
    this.refillTimer = null;
    this.startTimer = null;
  }

  /** One poll: renew leases, reclaim expired ones, claim and start due jobs. Never overlaps itself. */
  tick(): Promise<void> {
    this.ticking ??= Promise.resolve()
      .then(() => this.poll())
      .catch((error) => {
        if (isTransientStorageError(error)) {
          const delay = this.block(error);
          this.options.log.warn({ err: error, retryInMs: delay }, isStorageFull(error) ? 'job loop waits: the disk is full' : 'job loop waits: the database is locked');
        } else {
          this.options.log.error({ err: error }, 'job loop poll failed');
        }
      })
      .finally(() => (this.ticking = null));
    return this.ticking;
  }

  /** Records why the loop cannot write, and returns how long it waits before trying again. */
  private block(error: unknown): number {
    const reason = isStorageFull(error) ? 'storage-full' : isDatabaseBusy(error) ? 'database-busy' : 'error';
    const attempt = (this.blocked?.attempt ?? 0) + 1;
    const delay = this.backoffMs(attempt, STORAGE_WAIT_CEILING_MS);
    const message = error instanceof Error ? error.message : String(error);
    this.blocked = { reason, retryAt: this.clock.now() + delay, attempt, message };
    return delay;
  }

  private poll(): void {
    if (this.stopping) return;
    const now = this.clock.now();
    if (this.blocked && now < this.blocked.retryAt) return;
    // Outcomes that could not be saved go back first: their jobs run again later.
    for (const id of this.heldBack) {
      this.queue.giveBack(this.owner, id, now);
      this.heldBack.delete(id);
    }
    if (this.running.size) this.queue.heartbeat(this.owner, [...this.running.keys()], now, this.options.leaseMs);
    const reclaimed = this.queue.release(now, now, 'Lease expired: the worker running it stopped answering');
    if (reclaimed > 0) this.options.log.warn({ jobs: reclaimed }, 'reclaimed jobs with expired leases');
    this.fillSlots(now);
    if (this.blocked) {
      this.options.log.info({ after: this.blocked.reason }, 'job loop resumed');
      this.blocked = null;
    }
  }

  private fillSlots(now: number): void {
    for (const job of this.queue.claim(this.owner, this.options.concurrency - this.running.size, now, this.options.leaseMs)) this.launch(job);
  }

  /**
   * A freed slot takes the next due job within a few milliseconds rather than at the next
   * poll (which alone renews leases and reclaims expired ones). Through a short timer, shared
   * by the jobs finishing meanwhile: refilling at once would chain quick jobs back to back
   * and starve requests of the event loop.
   */
  private refillSoon(): void {
    if (this.stopping || this.refillTimer || this.blocked) return;
    this.refillTimer = setTimeout(() => {
      this.refillTimer = null;
      if (this.stopping) return;
      try {
        this.fillSlots(this.clock.now());
      } catch (error) {
        if (isTransientStorageError(error)) this.block(error);
        else this.options.log.error({ err: error }, 'job loop refill failed');
      }
    }, REFILL_DELAY_MS);
  }

  private launch(job: JobRow): void {
    const controller = new AbortController();
    const done = this.execute(job, controller.signal).finally(() => {
      this.running.delete(job.id);
      this.refillSoon();
    });
    this.running.set(job.id, { controller, done });
  }

  /** Runs a job and records its outcome; never rejects. */
  private async execute(job: JobRow, signal: AbortSignal): Promise<void> {
    let handler: AnyHandler | undefined;
    let result: unknown;
    try {
      handler = this.handlers.get(job.kind);
      if (!handler) throw Object.assign(new Error(`No handler for job kind "${job.kind}"`), { permanent: true });
      result = await handler.run(job.payload, signal, job);
    } catch (error) {
      if (signal.aborted) return;
      return this.record(job, () => this.recordFailure(job, error));
    }
    if (signal.aborted) return; // shutting down: stop() gives the job back
    await this.record(job, () => {
      const held = this.queue.succeed(this.owner, job.id, this.clock.now(), (tx) => {
        const recorded = handler!.complete(tx, result, job);
        this.settled(tx, job, { status: 'succeeded', result: recorded });
        return recorded;
      });
      if (held) this.options.log.info({ jobId: job.id, kind: job.kind }, 'job succeeded');
      else this.options.log.warn({ jobId: job.id, kind: job.kind }, 'job finished after losing its lease; its result was discarded');
    });
  }

  /**
   * Saves an outcome. A full disk or a locked database is nobody's fault: the outcome (a post
   * included) is dropped whole, since it commits in one transaction, the job is given back to
   * pending once writes work again, and the loop waits; a job never stays `running` for it,
   * and the process never ends for it.
   */
  private async record(job: JobRow, save: () => void): Promise<void> {
    try {
      save();
    } catch (saveError) {
      let error = saveError;
      if (!isTransientStorageError(error)) {
        try {
          this.recordFailure(job, error);
          return;
        } catch (again) {
          if (!isTransientStorageError(again)) {
            this.options.log.error({ err: again, jobId: job.id, kind: job.kind }, 'could not record the outcome of a job');
            return;
          }
          error = again;
        }
      }
      this.heldBack.add(job.id);
      const delay = this.block(error);
      this.options.log.warn(
        { err: error, jobId: job.id, kind: job.kind, retryInMs: delay },
        isStorageFull(error) ? 'job outcome not saved: the disk is full; the job goes back to pending' : 'job outcome not saved: the database is locked; the job goes back to pending',
      );
    }
  }

  private recordFailure(job: JobRow, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    if (isUnavailable(error)) {
      const delay = this.backoffMs(job.waits + 1, WAIT_CEILING_MS);
      const held = this.queue.defer(this.owner, job.id, message, this.clock.now() + delay, this.clock.now());
      this.options.log.warn({ jobId: job.id, kind: job.kind, waits: job.waits + 1, delayMs: delay, held, reason: message }, 'job waits for an unavailable dependency');
      return;
    }
    const outcome = this.queue.fail(this.owner, job, message, isPermanent(error), this.clock.now() + this.backoffMs(job.attempts), this.clock.now(), (tx) =>
      this.settled(tx, job, { status: 'failed', error: message }),
    );
    this.options.log.warn({ jobId: job.id, kind: job.kind, attempt: job.attempts, outcome, reason: message }, 'job attempt failed');
  }

  /** Delay before retry number `attempt`: base * 2^(attempt-1), capped, scaled by a jitter in [0.5, 1). */
  backoffMs(attempt: number, max = this.options.backoffMaxMs ?? 300_000): number {
    const base = this.options.backoffBaseMs ?? 2000;
    const ceiling = Math.min(max, base * 2 ** Math.max(0, attempt - 1));
    return Math.round(ceiling * (0.5 + this.random() / 2));
  }

  /** Resolves when no job is running (tests and benchmarks wait on states, not on sleeps). */
  async whenIdle(): Promise<void> {
    while (this.ticking || this.running.size) {
      await this.ticking;
      await Promise.all([...this.running.values()].map((r) => r.done));
    }
  }

  /**
   * Graceful stop: claim nothing more, let running jobs finish for up to the shutdown
   * timeout, then abort the rest and return them to pending for the next start.
   */
  async stop(): Promise<void> {
    this.stopClaiming();
    await this.ticking;
    const all = [...this.running.values()].map((r) => r.done);
    let timeout: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timeout = setTimeout(() => resolve('timeout'), this.options.shutdownTimeoutMs)));
    const result = await Promise.race([Promise.all(all).then(() => 'done' as const), timedOut]);
    clearTimeout(timeout);
    if (result === 'timeout') {
      const unfinished = [...this.running.keys()];
      for (const { controller } of this.running.values()) controller.abort(new Error('service shutting down'));
      this.giveBackAll(unfinished);
      this.options.log.warn({ jobs: unfinished.length }, 'returned unfinished jobs to pending at shutdown');
      await Promise.allSettled(all);
    }
    this.giveBackAll([...this.heldBack]);
  }

  /** Best effort at shutdown: what cannot be written now, the next start returns to pending. */
  private giveBackAll(ids: readonly string[]): void {
    for (const id of ids) {
      try {
        this.queue.giveBack(this.owner, id, this.clock.now());
        this.heldBack.delete(id);
      } catch (error) {
        this.options.log.warn({ err: error, jobId: id }, 'could not return a job to pending at shutdown; the next start will');
      }
    }
  }
}
