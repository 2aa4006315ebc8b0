import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Config } from '../config.js';
import type { Steps } from '../db/steps.js';
import { isDatabaseBusy, isDatabaseUnavailable, isStorageFull, isTransientStorageError } from '../errors.js';
import type { Job, JobRow } from './rules.js';
import type { JobQueue } from './store.js';

/** The reason given to jobs a stopped server left running when they go back to pending. */
export const INTERRUPTED = 'Interrupted: the service stopped while the job ran';

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * What a kind of job does. `run` does the slow part (a generation, a delivery) outside any
 * transaction and may be cancelled through `signal`; `complete` answers the steps that commit
 * its effect in the transaction that marks the job succeeded, ending with what the job keeps
 * as its result. An error with `permanent: true` fails the job at once instead of retrying it.
 */
export interface JobHandler<Payload = never, Result = unknown> {
  readonly kind: string;
  run(payload: Payload, signal: AbortSignal, job: Job<Payload>): Promise<Result>;
  complete(result: Result, job: Job<Payload>): Steps<unknown>;
}

/** How a job ended for good: told to settle listeners inside the transaction that records it. */
export type JobOutcome = { status: 'succeeded'; result: unknown } | { status: 'failed'; error: string };
/** Steps that run inside the transaction that records a job's outcome. */
export type JobSettledListener = (job: JobRow, outcome: JobOutcome) => Steps<void>;

/**
 * What the loop needs of a queue (JobQueue's methods). `succeed` and `fail` run the loop's
 * steps inside their transaction. `soleWorker`: see JobQueueOptions.
 */
export type LoopQueue = Pick<JobQueue, 'claim' | 'heartbeat' | 'release' | 'giveBack' | 'succeed' | 'defer' | 'fail'> & { readonly soleWorker?: boolean };

// Handlers of every kind sit in one map; each sees only payloads of its own kind.
type AnyHandler = JobHandler<any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface JobLoopOptions {
  pollMs: number;
  concurrency: number;
  leaseMs: number;
  shutdownTimeoutMs: number;
  /**
   * At start, return every running job to pending at once: right where no other process can
   * be running jobs of this database (the queue's `soleWorker`, the default). Never where
   * several instances share the database: their running jobs are alive; what a dead instance
   * left is reclaimed when its leases expire, by every poll.
   */
  releaseAllAtStart?: boolean;
  /** First retry delay; each further attempt doubles it (capped), with jitter. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  clock?: Clock;
  random?: () => number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/** A loop's options: polling, lease and shutdown from the configuration, the rest the loop's own. */
export function jobLoopOptions(
  config: Pick<Config, 'jobPollMs' | 'jobLeaseMs' | 'shutdownTimeoutMs'>,
  loop: Pick<JobLoopOptions, 'concurrency' | 'log' | 'clock' | 'random' | 'backoffBaseMs'>,
): JobLoopOptions {
  return { pollMs: config.jobPollMs, leaseMs: config.jobLeaseMs, shutdownTimeoutMs: config.shutdownTimeoutMs, ...loop };
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
 * The longest the loop waits between two tries while the database server cannot be reached: a
 * refused connection costs nothing to try, and work resumes within seconds of its return.
 */
export const UNREACHABLE_WAIT_CEILING_MS = 5_000;

/** Why the loop claims nothing for now. */
export type JobLoopWaitReason = 'storage-full' | 'database-busy' | 'database-unavailable' | 'error';

const WAIT_REASONS: Record<JobLoopWaitReason, string> = {
  'storage-full': 'the disk is full',
  'database-busy': 'the database is locked',
  'database-unavailable': 'the database cannot be reached',
  error: 'an error',
};

/**
 * `stopped`: not started (or stopped); `starting`: its start failed (the database was locked,
 * say) and is retried; `running`; `waiting`: running, but claiming nothing until the disk has
 * space or the database is unlocked or reachable again; `stopping`: claims nothing more,
 * finishing its jobs.
 */
export type JobLoopState = 'stopped' | 'starting' | 'running' | 'waiting' | 'stopping';

export interface JobLoopStatus {
  state: JobLoopState;
  active: number;
  /** Why the loop waits (or retries its start), and when it tries again. */
  waiting: { reason: JobLoopWaitReason; retryAt: Date; message: string } | null;
}

/**
 * The in-process job loop: polls for due jobs, claims them atomically up to the concurrency
 * limit, runs each with its kind's handler, keeps their leases alive, and retries failures
 * with exponential backoff and jitter. Over either database: what handlers and settle listeners
 * write in a job's transaction are steps (src/db/steps.ts).
 */
export class JobLoop {
  /**
   * What the jobs it runs record as their lease's owner: which machine and process runs a job
   * (several instances may share the database), and which of its loops.
   */
  readonly owner = `worker-${hostname()}-${process.pid}-${randomUUID()}`;
  private readonly running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private timer: NodeJS.Timeout | null = null;
  private refillTimer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  /** The last claim asked for: claims run one at a time, each counting what the one before filled. */
  private lastFill: Promise<void> = Promise.resolve();
  private fillsPending = 0;
  private stopping = false;
  private started = false;
  private startTimer: NodeJS.Timeout | null = null;
  /** Set while the start's release is under way. */
  private startPending = false;
  /** The start's release, while under way (whenIdle waits for it). */
  private starting: Promise<void> | null = null;
  /** Set while the disk is full or the database locked or away (or the start failed): nothing is claimed before `retryAt`. */
  private blocked: { reason: JobLoopWaitReason; retryAt: number; attempt: number; message: string } | null = null;
  /** Jobs whose outcome could not be saved (full disk): given back to pending once writes work again. */
  private readonly heldBack = new Set<string>();
  private readonly clock: Clock;
  private readonly random: () => number;

  private readonly handlers = new Map<string, AnyHandler>();
  private readonly settledListeners: JobSettledListener[] = [];

  constructor(
    /** The queue it runs over, scoped to the kinds this loop runs (JobQueue.scoped). */
    readonly queue: LoopQueue,
    handlers: readonly AnyHandler[],
    private readonly options: JobLoopOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    for (const handler of handlers) this.register(handler);
  }

  /** Runs `listener`'s steps inside the transaction in which any job succeeds or fails for good. */
  onSettled(listener: JobSettledListener): void {
    this.settledListeners.push(listener);
  }

  /** Tells the listeners, one after the other. */
  private *settled(job: JobRow, outcome: JobOutcome): Steps<void> {
    for (const listener of this.settledListeners) yield* listener(job, outcome);
  }

  /** What commits with a job's success: its effect, then the listeners; answers the job's result. */
  private *commitSuccess(handler: AnyHandler, result: unknown, job: JobRow): Steps<unknown> {
    const recorded = yield* handler.complete(result, job);
    yield* this.settled(job, { status: 'succeeded', result: recorded });
    return recorded;
  }

  /** Adds the handler of a kind of job; a kind has one handler. */
  register(handler: AnyHandler): void {
    if (this.handlers.has(handler.kind)) throw new Error(`A handler for job kind "${handler.kind}" is already registered`);
    this.handlers.set(handler.kind, handler);
  }

  /**
   * Starts polling. With `releaseAllAtStart`, tasks an earlier process of this database left
   * running (it crashed) go back to pending at once rather than when their lease would run
   * out; `status()` says `starting` until that is written. Never throws: when that first write
   * fails (a database locked by another program, a full disk), the start is retried with a
   * growing delay. Without it, nothing is written at start: a database that cannot be reached
   * makes the first polls wait (`waiting`), not the start.
   */
  start(): void {
    if (this.started || this.stopping || this.startPending) return;
    if (this.startTimer) clearTimeout(this.startTimer);
    this.startTimer = null;
    if (!(this.options.releaseAllAtStart ?? this.queue.soleWorker ?? true)) return this.begin(0);
    this.startPending = true;
    const started = Promise.resolve()
      .then(() => this.queue.release(this.clock.now(), null, INTERRUPTED))
      .then(
        (count) => {
          this.startPending = false;
          if (!this.stopping) this.begin(count);
        },
        (error) => {
          this.startPending = false;
          if (!this.stopping) this.retryStart(error);
        },
      )
      .finally(() => {
        if (this.starting === started) this.starting = null;
      });
    this.starting = started;
  }

  private retryStart(error: unknown): void {
    const delay = this.block(error);
    this.options.log.warn({ err: error, retryInMs: delay }, 'job loop could not start; retrying');
    this.startTimer = setTimeout(() => this.start(), delay);
    this.startTimer.unref();
  }

  private begin(released: number): void {
    if (released > 0) this.options.log.warn({ jobs: released }, 'returned jobs left running by an earlier process');
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
    else if (!this.started) state = this.startTimer || this.startPending ? 'starting' : 'stopped';
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
          this.options.log.warn({ err: error, retryInMs: delay }, `job loop waits: ${WAIT_REASONS[this.blocked!.reason]}`);
        } else {
          this.options.log.error({ err: error }, 'job loop poll failed');
        }
      })
      .finally(() => (this.ticking = null));
    return this.ticking;
  }

  /** Records why the loop cannot write, and returns how long it waits before trying again. */
  private block(error: unknown): number {
    const reason: JobLoopWaitReason = isStorageFull(error)
      ? 'storage-full'
      : isDatabaseBusy(error)
        ? 'database-busy'
        : isDatabaseUnavailable(error)
          ? 'database-unavailable'
          : 'error';
    const attempt = (this.blocked?.attempt ?? 0) + 1;
    const delay = this.backoffMs(attempt, reason === 'database-unavailable' ? UNREACHABLE_WAIT_CEILING_MS : STORAGE_WAIT_CEILING_MS);
    const message = error instanceof Error ? error.message : String(error);
    this.blocked = { reason, retryAt: this.clock.now() + delay, attempt, message };
    return delay;
  }

  private async poll(): Promise<void> {
    if (this.stopping) return;
    const now = this.clock.now();
    const blocked = this.blocked;
    if (blocked && now < blocked.retryAt) return;
    // Outcomes that could not be saved go back first: their jobs run again later.
    for (const id of this.heldBack) {
      await this.queue.giveBack(this.owner, id, now);
      this.heldBack.delete(id);
    }
    if (this.running.size) await this.queue.heartbeat(this.owner, [...this.running.keys()], now, this.options.leaseMs);
    const reclaimed = await this.queue.release(now, now, 'Lease expired: the worker running it stopped answering');
    if (reclaimed > 0) this.options.log.warn({ jobs: reclaimed }, 'reclaimed jobs with expired leases');
    await this.fillSlots();
    // Unless a job's outcome found the database away meanwhile (outcomes are saved while polls run).
    if (blocked && this.blocked === blocked) {
      this.options.log.info({ after: blocked.reason }, 'job loop resumed');
      this.blocked = null;
    }
  }

  /**
   * Claims for the free slots. One claim at a time (a poll's and a refill's may overlap: the
   * queue answers promises), so that each counts the slots the one before it filled.
   */
  private fillSlots(): Promise<void> {
    this.fillsPending++;
    const fill = this.lastFill.then(async () => {
      if (this.stopping) return;
      const limit = this.options.concurrency - this.running.size;
      if (limit <= 0) return;
      for (const job of await this.queue.claim(this.owner, limit, this.clock.now(), this.options.leaseMs)) this.launch(job);
    });
    this.lastFill = fill.then(
      () => void this.fillsPending--,
      () => void this.fillsPending--,
    );
    return fill;
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
      this.fillSlots().catch((error) => {
        if (isTransientStorageError(error)) this.block(error);
        else this.options.log.error({ err: error }, 'job loop refill failed');
      });
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
    await this.record(job, async () => {
      const held = await this.queue.succeed(this.owner, job.id, this.clock.now(), () => this.commitSuccess(handler!, result, job));
      if (held) this.options.log.info({ jobId: job.id, kind: job.kind }, 'job succeeded');
      else this.options.log.warn({ jobId: job.id, kind: job.kind }, 'job finished after losing its lease; its result was discarded');
    });
  }

  /**
   * Saves an outcome. A full disk, a locked database or one that cannot be reached is nobody's
   * fault: the outcome (a post included) is dropped whole, since it commits in one
   * transaction, the job is given back to pending once writes work again, and the loop waits;
   * a job never stays `running` for it, and the process never ends for it.
   */
  private async record(job: JobRow, save: () => Promise<void>): Promise<void> {
    try {
      await save();
    } catch (saveError) {
      let error = saveError;
      if (!isTransientStorageError(error)) {
        try {
          await this.recordFailure(job, error);
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
        `job outcome not saved: ${WAIT_REASONS[this.blocked!.reason]}; the job goes back to pending`,
      );
    }
  }

  private async recordFailure(job: JobRow, error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    if (isUnavailable(error)) {
      const delay = this.backoffMs(job.waits + 1, WAIT_CEILING_MS);
      const held = await this.queue.defer(this.owner, job.id, message, this.clock.now() + delay, this.clock.now());
      this.options.log.warn({ jobId: job.id, kind: job.kind, waits: job.waits + 1, delayMs: delay, held, reason: message }, 'job waits for an unavailable dependency');
      return;
    }
    const outcome = await this.queue.fail(this.owner, job, message, isPermanent(error), this.clock.now() + this.backoffMs(job.attempts), this.clock.now(), () =>
      this.settled(job, { status: 'failed', error: message }),
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
    while (this.starting || this.ticking || this.fillsPending || this.running.size) {
      await this.starting;
      await this.ticking;
      await this.lastFill;
      await Promise.all([...this.running.values()].map((r) => r.done));
    }
  }

  /**
   * Graceful stop: claim nothing more, let running jobs finish for up to the shutdown
   * timeout, then abort the rest and return them to pending for the next start.
   */
  async stop(): Promise<void> {
    this.stopClaiming();
    await this.starting;
    await this.ticking;
    await this.lastFill;
    const all = [...this.running.values()].map((r) => r.done);
    let timeout: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timeout = setTimeout(() => resolve('timeout'), this.options.shutdownTimeoutMs)));
    const result = await Promise.race([Promise.all(all).then(() => 'done' as const), timedOut]);
    clearTimeout(timeout);
    if (result === 'timeout') {
      const unfinished = [...this.running.keys()];
      for (const { controller } of this.running.values()) controller.abort(new Error('service shutting down'));
      await this.giveBackAll(unfinished);
      this.options.log.warn({ jobs: unfinished.length }, 'returned unfinished jobs to pending at shutdown');
      await Promise.allSettled(all);
    }
    await this.giveBackAll([...this.heldBack]);
  }

  /** Best effort at shutdown: what cannot be written now, the next start (or an expired lease) returns to pending. */
  private async giveBackAll(ids: readonly string[]): Promise<void> {
    await Promise.all(
      ids.map(async (id) => {
        try {
          await this.queue.giveBack(this.owner, id, this.clock.now());
          this.heldBack.delete(id);
        } catch (error) {
          this.options.log.warn({ err: error, jobId: id }, 'could not return a job to pending at shutdown; the next start will');
        }
      }),
    );
  }
}
