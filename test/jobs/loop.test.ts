import t, { type Test } from 'tap';
import { openDatabase, type DbHandle } from '../../src/db/sqlite.js';
import { jobs } from '../../src/db/schema.js';
import { JobLoop, type JobHandler, type LoopQueue } from '../../src/jobs/loop.js';
import type { Job, JobRow } from '../../src/jobs/store.js';
import { createSite } from '../helpers/sites.js';
import { sqliteStores } from '../../src/stores/sqlite.js';
import { tempDataDir, waitFor } from '../helpers/app.js';
import { EFFECT, MARKS, SETTLED, markSteps } from '../helpers/job-effect.js';
import { count, eq } from '../../src/db/orm.js';

// The queue and loop are tested with a kind of job of this test's own, which knows nothing of
// posts: its effect is a row written in the transaction that marks the job succeeded.
const NOTE = 'note';
interface NotePayload {
  text: string;
}
type NoteRun = (job: Job<NotePayload>, signal: AbortSignal) => Promise<string>;

const noteKind = (run: NoteRun): JobHandler<NotePayload, string> => ({
  kind: NOTE,
  run: (_payload, signal, job) => run(job, signal),
  *complete(text, job) {
    yield* markSteps(EFFECT, job.siteId, job.id);
    return { effect: text };
  },
});

const T0 = Date.parse('2026-11-22T10:00:00.000Z');
const silent = { info() {}, warn() {}, error() {} };

function setup(t: Test) {
  const handle: DbHandle = openDatabase(tempDataDir(t));
  t.teardown(() => handle.close());
  const site = createSite(handle.db, 'Jobs');
  const clock = { ms: T0, now() { return this.ms; } };
  // Every kind but the tests' own marks.
  const queue = sqliteStores(handle).jobs.scoped({ except: MARKS });
  const addJobs = (n: number, dueInMs = 0, maxAttempts = 3) =>
    queue.enqueue(
      site.id,
      Array.from({ length: n }, (_, i) => ({ kind: NOTE, payload: { text: `Note ${i}` }, scheduledFor: new Date(T0 + dueInMs) })),
      maxAttempts,
      new Date(T0),
    );
  const makeLoop = (run: NoteRun = async (job) => job.payload.text, options: Partial<ConstructorParameters<typeof JobLoop>[2]> = {}) =>
    new JobLoop(queue, [noteKind(run)], { pollMs: 100, concurrency: 2, leaseMs: 60_000, shutdownTimeoutMs: 1000, backoffBaseMs: 2000, clock, random: () => 0, log: silent, ...options });
  // Rows read behind the queue's API, at once.
  const job = (id: string) => handle.db.select().from(jobs).where(eq(jobs.id, id)).get()!;
  const marks = (kind: string) => handle.db.select({ n: count() }).from(jobs).where(eq(jobs.kind, kind)).get()!.n;
  const effectCount = () => marks(EFFECT);
  return { handle, site, clock, queue, addJobs, makeLoop, job, marks, effectCount };
}

t.test('a task is not claimed before it is due, and runs once due', async (t) => {
  const s = setup(t);
  const [task] = await s.addJobs(1, 5000);
  const loop = s.makeLoop();
  await loop.tick();
  await loop.whenIdle();
  t.equal(s.job(task.id).status, 'pending');
  t.equal(s.job(task.id).attempts, 0);
  s.clock.ms = T0 + 5000;
  await loop.tick();
  await loop.whenIdle();
  const done = s.job(task.id);
  t.equal(done.status, 'succeeded');
  t.equal(done.attempts, 1);
  t.same(done.result, { effect: 'Note 0' });
  t.equal(done.finishedAt?.getTime(), T0 + 5000);
  t.equal(done.startedAt?.getTime(), T0 + 5000);
  t.equal(s.effectCount(), 1);
});

t.test('a failed attempt is retried after an exponential backoff with jitter', async (t) => {
  const s = setup(t);
  const [task] = await s.addJobs(1);
  let calls = 0;
  const loop = s.makeLoop(async (row) => {
    calls++;
    if (calls < 3) throw new Error(`flaky ${calls}`);
    return row.payload.text;
  });
  t.equal(loop.backoffMs(1), 1000, 'attempt 1: base 2000 x jitter 0.5');
  t.equal(loop.backoffMs(2), 2000, 'attempt 2 doubles');
  t.equal(loop.backoffMs(20), 150_000, 'capped at 300 s before jitter');

  await loop.tick();
  await loop.whenIdle();
  let row = s.job(task.id);
  t.equal(row.status, 'pending');
  t.equal(row.attempts, 1);
  t.equal(row.lastError, 'flaky 1');
  t.equal(row.runAfter.getTime(), T0 + 1000);

  s.clock.ms = T0 + 999;
  await loop.tick();
  await loop.whenIdle();
  t.equal(s.job(task.id).attempts, 1, 'not before the backoff ends');

  s.clock.ms = T0 + 1000;
  await loop.tick();
  await loop.whenIdle();
  row = s.job(task.id);
  t.equal(row.attempts, 2);
  t.equal(row.runAfter.getTime(), T0 + 1000 + 2000, 'second backoff is twice the first');

  s.clock.ms = T0 + 3000;
  await loop.tick();
  await loop.whenIdle();
  row = s.job(task.id);
  t.equal(row.status, 'succeeded');
  t.equal(row.attempts, 3);
  t.equal(row.lastError, null);
});

t.test('a task fails after its last attempt, and a permanent error fails it at once', async (t) => {
  const s = setup(t);
  const [always, permanent] = await s.addJobs(2, 0, 2);
  const loop = s.makeLoop(async (row) => {
    if (row.id === permanent.id) throw Object.assign(new Error('Unknown model "nope"'), { permanent: true });
    throw new Error('always broken');
  });
  await loop.tick();
  await loop.whenIdle();
  t.equal(s.job(permanent.id).status, 'failed');
  t.equal(s.job(permanent.id).attempts, 1);
  t.equal(s.job(permanent.id).lastError, 'Unknown model "nope"');
  t.equal(s.job(always.id).status, 'pending');
  s.clock.ms = T0 + 60_000;
  await loop.tick();
  await loop.whenIdle();
  const failed = s.job(always.id);
  t.equal(failed.status, 'failed');
  t.equal(failed.attempts, 2);
  t.equal(failed.lastError, 'always broken');
  t.equal(failed.finishedAt?.getTime(), T0 + 60_000);
  t.equal(s.effectCount(), 0);
});

t.test('concurrency never goes above the limit', async (t) => {
  const s = setup(t);
  await s.addJobs(10);
  const gates: (() => void)[] = [];
  let active = 0;
  let peak = 0;
  const loop = s.makeLoop(
    async (row) => {
      active++;
      peak = Math.max(peak, active);
      await new Promise<void>((resolve) => gates.push(resolve));
      active--;
      return row.payload.text;
    },
    { concurrency: 3 },
  );
  for (let round = 0; round < 6; round++) {
    await loop.tick();
    t.ok(loop.activeCount <= 3, `round ${round}: ${loop.activeCount} running`);
    gates.splice(0).forEach((open) => open());
    await new Promise((resolve) => setImmediate(resolve));
  }
  await loop.tick();
  gates.splice(0).forEach((open) => open());
  await loop.whenIdle();
  while (s.effectCount() < 10) {
    await loop.tick();
    gates.splice(0).forEach((open) => open());
    await loop.whenIdle();
  }
  t.equal(peak, 3);
  t.equal(s.effectCount(), 10);
});

t.test('cancel: a pending task is never run; a running one cannot be cancelled', async (t) => {
  const s = setup(t);
  const [a, b] = await s.addJobs(2, 1000);
  const cancelled = await s.queue.cancel(s.site.id, NOTE, a.id, new Date(T0));
  t.equal(cancelled.status, 'cancelled');
  await t.rejects(s.queue.cancel(s.site.id, NOTE, a.id), { code: 'CONFLICT' });
  await t.rejects(s.queue.cancel('other-site', NOTE, b.id), { code: 'NOT_FOUND' });
  let release!: () => void;
  const loop = s.makeLoop(async (row) => {
    await new Promise<void>((resolve) => (release = resolve));
    return row.payload.text;
  });
  s.clock.ms = T0 + 1000;
  await loop.tick();
  t.equal(s.job(b.id).status, 'running');
  await t.rejects(s.queue.cancel(s.site.id, NOTE, b.id), { code: 'CONFLICT' });
  release();
  await loop.whenIdle();
  t.equal(s.job(a.id).status, 'cancelled');
  t.equal(s.job(b.id).status, 'succeeded');
  t.equal(s.effectCount(), 1);
});

t.test('graceful shutdown waits for running tasks, then returns the unfinished ones', async (t) => {
  const s = setup(t);
  const [quick, stuck] = await s.addJobs(2);
  let finishQuick!: () => void;
  const loop = s.makeLoop(
    async (row, signal) => {
      if (row.id === stuck.id) {
        await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      } else {
        await new Promise<void>((resolve) => (finishQuick = resolve));
      }
      return row.payload.text;
    },
    { shutdownTimeoutMs: 1000 },
  );
  await loop.tick();
  t.equal(loop.activeCount, 2);
  const stopping = loop.stop();
  finishQuick(); // finishes while shutdown waits
  await stopping;
  t.equal(s.job(quick.id).status, 'succeeded', 'finished within the timeout');
  const returned = s.job(stuck.id);
  t.equal(returned.status, 'pending', 'returned to pending');
  t.equal(returned.attempts, 0, 'the interrupted attempt is not held against it');
  t.equal(returned.leaseOwner, null);
  await loop.tick();
  t.equal(s.job(stuck.id).status, 'pending', 'a stopped loop claims nothing');
});

t.test('expired leases are reclaimed, and a job still commits its effect once', async (t) => {
  const s = setup(t);
  const [task] = await s.addJobs(1);
  let finishFirst!: () => void;
  const first = s.makeLoop(async (row) => {
    await new Promise<void>((resolve) => (finishFirst = resolve));
    return row.payload.text;
  });
  await first.tick();
  t.equal(s.job(task.id).leaseUntil?.getTime(), T0 + 60_000);

  s.clock.ms = T0 + 60_001;
  const second = s.makeLoop();
  await second.tick();
  await second.whenIdle();
  t.equal(s.job(task.id).status, 'succeeded');
  t.equal(s.job(task.id).attempts, 2);

  finishFirst();
  await first.whenIdle();
  t.equal(s.effectCount(), 1, 'the first worker lost its lease: its effect is discarded');
  t.equal(s.job(task.id).status, 'succeeded');
});

t.test('heartbeats keep a long task leased', async (t) => {
  const s = setup(t);
  const [task] = await s.addJobs(1);
  let finish!: () => void;
  const loop = s.makeLoop(async (row) => {
    await new Promise<void>((resolve) => (finish = resolve));
    return row.payload.text;
  });
  await loop.tick();
  s.clock.ms = T0 + 50_000;
  await loop.tick();
  t.equal(s.job(task.id).leaseUntil?.getTime(), T0 + 110_000, 'lease extended');
  s.clock.ms = T0 + 100_000;
  await loop.tick();
  t.equal(s.job(task.id).status, 'running', 'not reclaimed while heartbeating');
  finish();
  await loop.whenIdle();
  t.equal(s.job(task.id).status, 'succeeded');
});

t.test('start-up returns tasks an earlier process left running, at once', async (t) => {
  const s = setup(t);
  const [task, exhausted] = await s.addJobs(2);
  await s.queue.claim('dead-process', 2, T0, 60_000);
  s.handle.db.update(jobs).set({ attempts: 3 }).where(eq(jobs.id, exhausted.id)).run();
  const loop = s.makeLoop(undefined, { pollMs: 10_000 });
  loop.start();
  await loop.whenIdle();
  await loop.stop();
  const resumed: JobRow = s.job(task.id);
  t.equal(resumed.status, 'succeeded', 'run again without waiting for the lease');
  t.equal(resumed.attempts, 2);
  t.equal(s.job(exhausted.id).status, 'failed', 'no attempts left');
  t.match(s.job(exhausted.id).lastError, /Interrupted/);
});

t.test('a kind registers once, and a job of an unknown kind fails for good', async (t) => {
  const s = setup(t);
  const loop = s.makeLoop();
  t.throws(() => loop.register(noteKind(async () => 'again')), /already registered/);
  const [orphan] = await s.queue.enqueue(s.site.id, [{ kind: 'nobody-handles-this', payload: {}, scheduledFor: new Date(T0) }], 3, new Date(T0));
  await loop.tick();
  await loop.whenIdle();
  const row = await s.queue.get(s.site.id, 'nobody-handles-this', orphan.id);
  t.equal(row.status, 'failed');
  t.match(row.lastError, /No handler for job kind/);
});

t.test('a job whose dependency is unavailable waits without spending attempts, backing off to a ceiling', async (t) => {
  const s = setup(t);
  const [job] = await s.addJobs(1, 0, 1);
  let down = true;
  const loop = s.makeLoop(async (row) => {
    if (down) throw Object.assign(new Error('The Ollama server is unreachable'), { unavailable: true });
    return row.payload.text;
  });
  for (const [round, wait] of [[1, 1000], [2, 2000], [3, 4000]]) {
    await loop.tick();
    await loop.whenIdle();
    const row = s.job(job.id);
    t.equal(row.status, 'pending', `wait ${round}: still pending`);
    t.equal(row.attempts, 0, `wait ${round}: no attempt spent (max 1)`);
    t.equal(row.waits, round);
    t.equal(row.runAfter.getTime(), s.clock.ms + wait, `wait ${round}: backs off ${wait} ms`);
    s.clock.ms = row.runAfter.getTime();
  }
  t.equal(loop.backoffMs(30, 15 * 60_000), 450_000, 'capped at 15 minutes before jitter');
  down = false;
  await loop.tick();
  await loop.whenIdle();
  t.equal(s.job(job.id).status, 'succeeded');
  t.equal(s.job(job.id).attempts, 1);
});

t.test('settle listeners run in the transaction that records a success or a final failure', async (t) => {
  const s = setup(t);
  const [good, bad] = await s.addJobs(2, 0, 1);
  const loop = s.makeLoop(async (row) => {
    if (row.id === bad.id) throw new Error('broken for good');
    return row.payload.text;
  });
  const seen: string[] = [];
  loop.onSettled(function* (job, outcome) {
    // A write here commits with the job's own record.
    yield* markSteps(SETTLED, job.siteId, job.id);
    seen.push(`${job.id === good.id ? 'good' : 'bad'} ${outcome.status} ${outcome.status === 'failed' ? outcome.error : JSON.stringify(outcome.result)}`);
  });
  await loop.tick();
  await loop.whenIdle();
  t.same(seen.sort(), ['bad failed broken for good', 'good succeeded {"effect":"Note 0"}']);
  t.equal(s.marks(SETTLED), 2);
});

t.test('a handler or settle listener that fails inside the transaction rolls the whole success back', async (t) => {
  // (Steps cannot answer a promise: what a handler or listener writes is in the transaction by construction.)
  const s = setup(t);
  const [failingComplete, failingListener] = await s.addJobs(2, 0, 1);
  const loop = new JobLoop(
    s.queue,
    [
      {
        kind: NOTE,
        run: async (_payload: NotePayload, _signal: AbortSignal, job: Job<NotePayload>) => job.id,
        *complete(id: string, job: Job<NotePayload>) {
          yield* markSteps(EFFECT, job.siteId, job.id);
          if (id === failingComplete.id) throw new Error('the effect failed halfway');
          return { id };
        },
      },
    ],
    { pollMs: 100, concurrency: 2, leaseMs: 60_000, shutdownTimeoutMs: 1000, clock: s.clock, random: () => 0, log: silent },
  );
  loop.onSettled(function* (job, outcome) {
    yield* markSteps(SETTLED, job.siteId, job.id);
    if (job.id === failingListener.id && outcome.status === 'succeeded') throw new Error('the listener failed');
  });
  await loop.tick();
  await loop.whenIdle();
  t.match(s.job(failingComplete.id), { status: 'failed', lastError: 'the effect failed halfway' });
  t.match(s.job(failingListener.id), { status: 'failed', lastError: 'the listener failed' });
  t.equal(s.effectCount(), 0, 'no effect of either committed');
  const settledMarks = s.handle.db.select({ of: jobs.groupId }).from(jobs).where(eq(jobs.kind, SETTLED)).all();
  t.same(settledMarks.map((mark) => mark.of).sort(), [failingComplete.id, failingListener.id].sort(), 'only the failures were told, each once');
});

t.test('over a queue that answers promises, a start that fails is retried, `starting` meanwhile', async (t) => {
  // What the loop does over PostgreSQL's queue, without one: every answer a promise.
  let refusals = 1;
  const calls: string[] = [];
  const queue: LoopQueue = {
    async release(_now, expiredBefore) {
      calls.push(expiredBefore === null ? 'release all' : 'release expired');
      if (expiredBefore === null && refusals-- > 0) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      return 0;
    },
    claim: async () => [],
    heartbeat: async () => {},
    giveBack: async () => {},
    succeed: async () => true,
    defer: async () => true,
    fail: async () => 'retry' as const,
  };
  const warnings: string[] = [];
  const log = { info() {}, warn: (_obj: object, msg: string) => void warnings.push(msg), error() {} };
  const loop = new JobLoop(queue, [], { pollMs: 10_000, concurrency: 1, leaseMs: 60_000, shutdownTimeoutMs: 1000, backoffBaseMs: 20, random: () => 0, log });
  loop.start();
  t.equal(loop.status().state, 'starting', 'while the first release is under way');
  await waitFor(() => loop.status().state === 'running', 'the start to be retried');
  t.same(calls.slice(0, 2), ['release all', 'release all'], 'refused once, then done');
  t.same(warnings, ['job loop could not start; retrying']);
  const stopped = new JobLoop(queue, [], { pollMs: 10_000, concurrency: 1, leaseMs: 60_000, shutdownTimeoutMs: 1000, log });
  stopped.start();
  await stopped.stop();
  t.equal(stopped.status().state, 'stopping', 'a loop stopped while its start was under way does not start');
  await loop.stop();
});
