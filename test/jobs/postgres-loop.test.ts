import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { jobs } from '../../src/db/pg-schema.js';
import { JobLoop, type JobHandler, type JobLoopOptions } from '../../src/jobs/loop.js';
import type { Job } from '../../src/jobs/store.js';
import { postgresStores } from '../../src/stores/postgres.js';
import { EFFECT, MARKS, SETTLED, markSteps } from '../helpers/job-effect.js';
import { insertSite, markCount, SITE_ID } from '../helpers/pg-job-effect.js';
import { waitFor } from '../helpers/app.js';
import { canControlPostgres, ownPostgres, openTestPostgres, postgresTests, restartPostgres, startPostgres, stopPostgres } from '../helpers/postgres.js';
import { and, count, eq, inArray } from '../../src/db/orm.js';

// The job loop over PostgreSQL's queue: the same rules as over SQLite's (test/jobs/loop.test.ts),
// several loops on one database, and a database that goes away and comes back.

const NOTE = 'note';
const T0 = Date.parse('2026-11-22T10:00:00.000Z');
interface NotePayload {
  text: string;
}
type NoteRun = (job: Job<NotePayload>, signal: AbortSignal) => Promise<string>;

/** A kind of job whose effect (a mark of the job) commits with its success. */
const noteKind = (run: NoteRun): JobHandler<NotePayload, string> => ({
  kind: NOTE,
  run: (_payload, signal, job) => run(job, signal),
  *complete(text, job) {
    return { effectId: yield* markSteps(EFFECT, job.siteId, job.id), text };
  },
});

const silent = { info() {}, warn() {}, error() {} };

const open = (t: Test, url: string, poolMax = 4) => openTestPostgres(t, url, { poolMax });

async function setup(t: Test) {
  const url = await startPostgres(t);
  const handle = await open(t, url);
  await insertSite(handle.db);
  // Every kind but the tests' own marks.
  const queue = postgresStores(handle).jobs.scoped({ except: MARKS });
  const clock = { ms: T0, now() { return this.ms; } };
  const addJobs = (n: number, { dueInMs = 0, maxAttempts = 3 } = {}) =>
    queue.enqueue(
      SITE_ID,
      Array.from({ length: n }, (_, i) => ({ kind: NOTE, payload: { text: `Note ${i}` }, scheduledFor: new Date(T0 + dueInMs) })),
      maxAttempts,
      new Date(T0),
    );
  const makeLoop = (run: NoteRun = async (job) => job.payload.text, options: Partial<JobLoopOptions> = {}, over = queue) =>
    new JobLoop(over, [noteKind(run)], {
      pollMs: 100,
      concurrency: 2,
      leaseMs: 60_000,
      shutdownTimeoutMs: 1000,
      backoffBaseMs: 2000,
      clock,
      random: () => 0,
      log: silent,
      releaseAllAtStart: false,
      ...options,
    });
  const job = (id: string) => queue.get(SITE_ID, NOTE, id);
  const effectCount = () => markCount(handle.db, EFFECT);
  return { url, handle, queue, clock, addJobs, makeLoop, job, effectCount };
}

// Stops and restarts its server: a cluster of its own, not the suite's shared one.
ownPostgres();
postgresTests(() => {
  t.test('a job succeeds with its effect and its settle listeners in one transaction; failures are retried, then fail for good', async (t) => {
    const s = await setup(t);
    const [good, flaky, broken] = await s.addJobs(3, { maxAttempts: 2 });
    let flakyRuns = 0;
    const loop = s.makeLoop(async (row) => {
      if (row.id === broken.id) throw new Error('broken for good');
      if (row.id === flaky.id && ++flakyRuns === 1) throw new Error('flaky once');
      return row.payload.text;
    }, { concurrency: 3 });
    const seen: string[] = [];
    loop.onSettled(function* (row, outcome) {
      yield* markSteps(SETTLED, row.siteId, row.id);
      seen.push(`${row.id === good.id ? 'good' : row.id === flaky.id ? 'flaky' : 'broken'} ${outcome.status}`);
    });
    loop.onSettled(function* (row) {
      seen.push(`second listener ${row.id === good.id ? 'good' : 'other'}`);
    });

    await loop.tick();
    await loop.whenIdle();
    const done = await s.job(good.id);
    t.match(done, { status: 'succeeded', attempts: 1, result: { text: 'Note 0' }, finishedAt: new Date(T0) });
    t.match(await s.job(flaky.id), { status: 'pending', attempts: 1, lastError: 'flaky once', runAfter: new Date(T0 + 1000) });
    t.match(await s.job(broken.id), { status: 'pending', attempts: 1 });

    s.clock.ms = T0 + 60_000;
    await loop.tick();
    await loop.whenIdle();
    t.match(await s.job(flaky.id), { status: 'succeeded', attempts: 2, lastError: null });
    t.match(await s.job(broken.id), { status: 'failed', attempts: 2, lastError: 'broken for good', finishedAt: new Date(T0 + 60_000) });
    t.same(seen.sort(), ['broken failed', 'flaky succeeded', 'good succeeded', 'second listener good', 'second listener other', 'second listener other'], 'listeners in turn');
    t.equal(await s.effectCount(), 2, 'one effect per success');
    t.equal(await markCount(s.handle.db, SETTLED), 3, "each listener's write committed with the job's record");
    t.match((await s.job(good.id)).result, { effectId: String }, 'the result the handler answered');
  });

  t.test("a listener that fails rolls the job's success back whole: no effect, and the attempt is retried", async (t) => {
    const s = await setup(t);
    const [task] = await s.addJobs(1);
    const loop = s.makeLoop();
    let failing = true;
    loop.onSettled(function* () {
      if (failing) throw new Error('listener broke');
    });
    await loop.tick();
    await loop.whenIdle();
    t.match(await s.job(task.id), { status: 'pending', attempts: 1, lastError: 'listener broke' });
    t.equal(await s.effectCount(), 0, 'the effect rolled back with the success');
    failing = false;
    s.clock.ms = T0 + 60_000;
    await loop.tick();
    await loop.whenIdle();
    t.match(await s.job(task.id), { status: 'succeeded', attempts: 2 });
    t.equal(await s.effectCount(), 1);
  });

  t.test('start-up leaves the jobs other instances run alone; a dead one gives its jobs back when their leases expire', async (t) => {
    const s = await setup(t);
    const [theirs, mine] = await s.addJobs(2);
    await s.queue.claim('another-instance', 1, T0, 60_000);
    const loop = s.makeLoop(undefined, { pollMs: 60_000 });
    loop.start();
    t.equal(loop.status().state, 'running', 'nothing to write before running');
    await loop.whenIdle();
    t.match(await s.job(theirs.id), { status: 'running', leaseOwner: 'another-instance', attempts: 1 }, "another instance's job is left to it");
    t.match(await s.job(mine.id), { status: 'succeeded' });

    s.clock.ms = T0 + 60_001;
    await loop.tick();
    await loop.whenIdle();
    t.match(await s.job(theirs.id), { status: 'succeeded', attempts: 2 }, 'run here once its lease expired');
    t.equal(await s.effectCount(), 2);
    await loop.stop();
    t.equal(loop.status().state, 'stopping');
  });

  t.test('with releaseAllAtStart (one instance only), the start returns every running job first, and says `starting` meanwhile', async (t) => {
    const s = await setup(t);
    const [left, exhausted] = await s.addJobs(2);
    await s.queue.claim('dead-process', 2, T0, 60_000);
    await s.handle.db.update(jobs).set({ attempts: 3 }).where(eq(jobs.id, exhausted.id));
    const loop = s.makeLoop(undefined, { releaseAllAtStart: true, pollMs: 60_000 });
    loop.start();
    t.equal(loop.status().state, 'starting');
    loop.start(); // a second call while starting does nothing
    await waitFor(() => loop.status().state === 'running', 'the start');
    await loop.whenIdle();
    t.match(await s.job(left.id), { status: 'succeeded', attempts: 2 });
    t.match(await s.job(exhausted.id), { status: 'failed', lastError: /Interrupted.*no attempts left/ });
    await loop.stop();
  });

  t.test('two loops on one database (two instances) run each of 100 due jobs once, with one effect each', async (t) => {
    const s = await setup(t);
    const other = await open(t, s.url);
    const batch = await s.addJobs(100);
    const ran = new Map<string, number>();
    const run: NoteRun = async (job) => {
      ran.set(job.id, (ran.get(job.id) ?? 0) + 1);
      await sleep(1 + Math.random() * 5);
      return job.payload.text;
    };
    const realTime = { clock: { now: () => Date.now() }, pollMs: 20, concurrency: 4 };
    const a = s.makeLoop(run, realTime);
    const b = s.makeLoop(run, realTime, postgresStores(other).jobs.scoped({ except: MARKS }));
    const byLoop = new Map<string, string>();
    for (const loop of [a, b]) {
      loop.onSettled(function* (row) {
        byLoop.set(row.id, loop.owner);
      });
    }
    a.start();
    b.start();
    t.teardown(() => Promise.all([a.stop(), b.stop()]));
    const unfinished = async () =>
      (await s.handle.db.select({ n: count() }).from(jobs).where(and(eq(jobs.kind, NOTE), inArray(jobs.status, ['pending', 'running']))))[0]!.n;
    await waitFor(async () => (await unfinished()) === 0, 'every job to finish', 60_000);
    await Promise.all([a.whenIdle(), b.whenIdle()]);
    const rows = await s.handle.db.select().from(jobs).where(inArray(jobs.id, batch.map((row) => row.id)));
    t.same(new Set(rows.map((row) => row.status)), new Set(['succeeded']));
    t.same(new Set(rows.map((row) => row.attempts)), new Set([1]), 'one attempt each');
    t.equal(ran.size, 100);
    t.same(new Set(ran.values()), new Set([1]), 'each ran once');
    t.equal(await s.effectCount(), 100, 'one effect each');
    t.equal(byLoop.size, 100);
    t.comment(`loop a ran ${[...byLoop.values()].filter((owner) => owner === a.owner).length}, loop b ${[...byLoop.values()].filter((owner) => owner === b.owner).length}`);
  });

  t.test('PostgreSQL stopped: the loop waits and says so, keeps the outcome it could not save for later, and resumes once it is back', {
    skip: !canControlPostgres() && 'TEST_DATABASE_URL is not stopped by tests',
  }, async (t) => {
    const s = await setup(t);
    const [slow, later] = await s.addJobs(2);
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const errors: unknown[] = [];
    const warnings: string[] = [];
    const log = { info() {}, warn: (_obj: object, msg: string) => void warnings.push(msg), error: (obj: object) => void errors.push(obj) };
    const realTime = { clock: { now: () => Date.now() }, pollMs: 50, concurrency: 1, backoffBaseMs: 50, log };
    const loop = s.makeLoop(async (row) => {
      if (row.id === slow.id) await gate;
      return row.payload.text;
    }, realTime);
    t.teardown(() =>
      loop.stop().catch((error: unknown) => {
        console.error('teardown: stopping the loop failed:', error);
        throw error;
      }),
    );
    loop.start();
    await waitFor(async () => (await s.job(slow.id)).status === 'running', 'the first job to run');

    await stopPostgres();
    try {
      openGate(); // its success cannot be saved now
      await waitFor(() => loop.status().waiting?.reason === 'database-unavailable' && loop.activeCount === 0, 'the loop to wait for the database, the job ended');
      t.match(loop.status(), { state: 'waiting', active: 0, waiting: { reason: 'database-unavailable' } });
      t.ok(warnings.includes('job outcome not saved: the database cannot be reached; the job goes back to pending'), 'the outcome is held back, said once');
      await sleep(300); // polls meanwhile find it still away: they wait, with no error logged
      t.equal(loop.status().state, 'waiting', 'still waiting, not crashed');
    } finally {
      await restartPostgres();
    }
    const succeeded = async (id: string) => (await s.job(id).catch(() => null))?.status === 'succeeded';
    // The held-back job goes back to pending first and is claimed at a later poll: wait for both.
    await waitFor(async () => (await succeeded(later.id)) && (await succeeded(slow.id)), 'both jobs to succeed once it is back', 60_000);
    await loop.whenIdle();
    t.match(await s.job(slow.id), { status: 'succeeded', attempts: 1 }, 'given back and run again; the spoiled attempt not counted');
    t.equal(await s.effectCount(), 2, 'one effect each');
    t.match(loop.status(), { state: 'running', waiting: null });
    t.same(errors, [], 'no error logged: a database away is a wait, not a failure');
    t.ok(warnings.includes('job loop waits: the database cannot be reached'), 'the wait is said once in a while');
  });
});
