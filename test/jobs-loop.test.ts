import t, { type Test } from 'tap';
import { openDatabase, type DbHandle } from '../src/db/client.js';
import type { TaskRow } from '../src/db/schema.js';
import { JobLoop, type TaskWork } from '../src/jobs/loop.js';
import { cancelTask, createTasks, getTask, TaskStore } from '../src/jobs/store.js';
import { insertPost } from '../src/posts/service.js';
import { createSite } from '../src/sites/keys.js';
import { tempDataDir } from './helpers/app.js';

const T0 = Date.parse('2026-11-22T10:00:00.000Z');
const silent = { info() {}, warn() {}, error() {} };

function setup(t: Test) {
  const handle: DbHandle = openDatabase(tempDataDir(t));
  t.teardown(() => handle.close());
  const site = createSite(handle.db, 'Jobs');
  const clock = { ms: T0, now() { return this.ms; } };
  const store = new TaskStore(handle);
  const addTasks = (count: number, dueInMs = 0, maxAttempts = 3) =>
    createTasks(
      handle.db,
      site.id,
      'batch-1',
      Array.from({ length: count }, (_, i) => ({ topic: `Topic ${i}`, params: { status: 'DRAFT' as const }, scheduledFor: new Date(T0 + dueInMs) })),
      maxAttempts,
      new Date(T0),
    );
  const postWork: TaskWork = async (task) => ({
    missingFileIds: [],
    insertPost: (tx) => insertPost(tx, task.siteId, { title: task.topic }, { sourceTaskId: task.id }),
  });
  const makeLoop = (work: TaskWork, options: Partial<ConstructorParameters<typeof JobLoop>[2]> = {}) =>
    new JobLoop(store, work, { pollMs: 100, concurrency: 2, leaseMs: 60_000, shutdownTimeoutMs: 1000, backoffBaseMs: 2000, clock, random: () => 0, log: silent, ...options });
  const task = (id: string) => getTask(handle.db, site.id, id);
  const postCount = () => (handle.sqlite.prepare('select count(*) as n from posts').get() as { n: number }).n;
  return { handle, site, clock, store, addTasks, postWork, makeLoop, task, postCount };
}

t.test('a task is not claimed before it is due, and runs once due', async (t) => {
  const s = setup(t);
  const [task] = s.addTasks(1, 5000);
  const loop = s.makeLoop(s.postWork);
  await loop.tick();
  await loop.whenIdle();
  t.equal(s.task(task.id).status, 'pending');
  t.equal(s.task(task.id).attempts, 0);
  s.clock.ms = T0 + 5000;
  await loop.tick();
  await loop.whenIdle();
  const done = s.task(task.id);
  t.equal(done.status, 'succeeded');
  t.equal(done.attempts, 1);
  t.ok(done.postId);
  t.equal(done.finishedAt?.getTime(), T0 + 5000);
  t.equal(done.startedAt?.getTime(), T0 + 5000);
  t.equal(s.postCount(), 1);
});

t.test('a failed attempt is retried after an exponential backoff with jitter', async (t) => {
  const s = setup(t);
  const [task] = s.addTasks(1);
  let calls = 0;
  const loop = s.makeLoop(async (row, signal) => {
    calls++;
    if (calls < 3) throw new Error(`flaky ${calls}`);
    return s.postWork(row, signal);
  });
  t.equal(loop.backoffMs(1), 1000, 'attempt 1: base 2000 x jitter 0.5');
  t.equal(loop.backoffMs(2), 2000, 'attempt 2 doubles');
  t.equal(loop.backoffMs(20), 150_000, 'capped at 300 s before jitter');

  await loop.tick();
  await loop.whenIdle();
  let row = s.task(task.id);
  t.equal(row.status, 'pending');
  t.equal(row.attempts, 1);
  t.equal(row.lastError, 'flaky 1');
  t.equal(row.runAfter.getTime(), T0 + 1000);

  s.clock.ms = T0 + 999;
  await loop.tick();
  await loop.whenIdle();
  t.equal(s.task(task.id).attempts, 1, 'not before the backoff ends');

  s.clock.ms = T0 + 1000;
  await loop.tick();
  await loop.whenIdle();
  row = s.task(task.id);
  t.equal(row.attempts, 2);
  t.equal(row.runAfter.getTime(), T0 + 1000 + 2000, 'second backoff is twice the first');

  s.clock.ms = T0 + 3000;
  await loop.tick();
  await loop.whenIdle();
  row = s.task(task.id);
  t.equal(row.status, 'succeeded');
  t.equal(row.attempts, 3);
  t.equal(row.lastError, null);
});

t.test('a task fails after its last attempt, and a permanent error fails it at once', async (t) => {
  const s = setup(t);
  const [always, permanent] = s.addTasks(2, 0, 2);
  const loop = s.makeLoop(async (row) => {
    if (row.id === permanent.id) throw Object.assign(new Error('Unknown model "nope"'), { permanent: true });
    throw new Error('always broken');
  });
  await loop.tick();
  await loop.whenIdle();
  t.equal(s.task(permanent.id).status, 'failed');
  t.equal(s.task(permanent.id).attempts, 1);
  t.equal(s.task(permanent.id).lastError, 'Unknown model "nope"');
  t.equal(s.task(always.id).status, 'pending');
  s.clock.ms = T0 + 60_000;
  await loop.tick();
  await loop.whenIdle();
  const failed = s.task(always.id);
  t.equal(failed.status, 'failed');
  t.equal(failed.attempts, 2);
  t.equal(failed.lastError, 'always broken');
  t.equal(failed.finishedAt?.getTime(), T0 + 60_000);
  t.equal(s.postCount(), 0);
});

t.test('concurrency never goes above the limit', async (t) => {
  const s = setup(t);
  s.addTasks(10);
  const gates: (() => void)[] = [];
  let active = 0;
  let peak = 0;
  const loop = s.makeLoop(
    async (row, signal) => {
      active++;
      peak = Math.max(peak, active);
      await new Promise<void>((resolve) => gates.push(resolve));
      active--;
      return s.postWork(row, signal);
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
  while (s.postCount() < 10) {
    await loop.tick();
    gates.splice(0).forEach((open) => open());
    await loop.whenIdle();
  }
  t.equal(peak, 3);
  t.equal(s.postCount(), 10);
});

t.test('cancel: a pending task is never run; a running one cannot be cancelled', async (t) => {
  const s = setup(t);
  const [a, b] = s.addTasks(2, 1000);
  const cancelled = cancelTask(s.handle.db, s.site.id, a.id, new Date(T0));
  t.equal(cancelled.status, 'cancelled');
  t.throws(() => cancelTask(s.handle.db, s.site.id, a.id), { code: 'CONFLICT' });
  t.throws(() => cancelTask(s.handle.db, 'other-site', b.id), { code: 'NOT_FOUND' });
  let release!: () => void;
  const loop = s.makeLoop(async (row, signal) => {
    await new Promise<void>((resolve) => (release = resolve));
    return s.postWork(row, signal);
  });
  s.clock.ms = T0 + 1000;
  await loop.tick();
  t.equal(s.task(b.id).status, 'running');
  t.throws(() => cancelTask(s.handle.db, s.site.id, b.id), { code: 'CONFLICT' });
  release();
  await loop.whenIdle();
  t.equal(s.task(a.id).status, 'cancelled');
  t.equal(s.task(b.id).status, 'succeeded');
  t.equal(s.postCount(), 1);
});

t.test('graceful shutdown waits for running tasks, then returns the unfinished ones', async (t) => {
  const s = setup(t);
  const [quick, stuck] = s.addTasks(2);
  let finishQuick!: () => void;
  const loop = s.makeLoop(
    async (row, signal) => {
      if (row.id === stuck.id) {
        await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      } else {
        await new Promise<void>((resolve) => (finishQuick = resolve));
      }
      return s.postWork(row, signal);
    },
    { shutdownTimeoutMs: 1000 },
  );
  await loop.tick();
  t.equal(loop.activeCount, 2);
  const stopping = loop.stop();
  finishQuick(); // finishes while shutdown waits
  await stopping;
  t.equal(s.task(quick.id).status, 'succeeded', 'finished within the timeout');
  const returned = s.task(stuck.id);
  t.equal(returned.status, 'pending', 'returned to pending');
  t.equal(returned.attempts, 0, 'the interrupted attempt is not held against it');
  t.equal(returned.leaseOwner, null);
  await loop.tick();
  t.equal(s.task(stuck.id).status, 'pending', 'a stopped loop claims nothing');
});

t.test('expired leases are reclaimed, and a task still makes one post only', async (t) => {
  const s = setup(t);
  const [task] = s.addTasks(1);
  let finishFirst!: () => void;
  const first = s.makeLoop(async (row, signal) => {
    await new Promise<void>((resolve) => (finishFirst = resolve));
    return s.postWork(row, signal);
  });
  await first.tick();
  t.equal(s.task(task.id).leaseUntil?.getTime(), T0 + 60_000);

  s.clock.ms = T0 + 60_001;
  const second = s.makeLoop(s.postWork);
  await second.tick();
  await second.whenIdle();
  t.equal(s.task(task.id).status, 'succeeded');
  t.equal(s.task(task.id).attempts, 2);

  finishFirst();
  await first.whenIdle();
  t.equal(s.postCount(), 1, 'the first worker lost its lease: its result is discarded');
  t.equal(s.task(task.id).status, 'succeeded');
});

t.test('heartbeats keep a long task leased', async (t) => {
  const s = setup(t);
  const [task] = s.addTasks(1);
  let finish!: () => void;
  const loop = s.makeLoop(async (row, signal) => {
    await new Promise<void>((resolve) => (finish = resolve));
    return s.postWork(row, signal);
  });
  await loop.tick();
  s.clock.ms = T0 + 50_000;
  await loop.tick();
  t.equal(s.task(task.id).leaseUntil?.getTime(), T0 + 110_000, 'lease extended');
  s.clock.ms = T0 + 100_000;
  await loop.tick();
  t.equal(s.task(task.id).status, 'running', 'not reclaimed while heartbeating');
  finish();
  await loop.whenIdle();
  t.equal(s.task(task.id).status, 'succeeded');
});

t.test('start-up returns tasks an earlier process left running, at once', async (t) => {
  const s = setup(t);
  const [task, exhausted] = s.addTasks(2);
  s.store.claim('dead-process', 2, T0, 60_000);
  s.handle.sqlite.prepare('update tasks set attempts = max_attempts where id = ?').run(exhausted.id);
  const loop = s.makeLoop(s.postWork, { pollMs: 10_000 });
  loop.start();
  await loop.whenIdle();
  await loop.stop();
  const resumed: TaskRow = s.task(task.id);
  t.equal(resumed.status, 'succeeded', 'run again without waiting for the lease');
  t.equal(resumed.attempts, 2);
  t.equal(s.task(exhausted.id).status, 'failed', 'no attempts left');
  t.match(s.task(exhausted.id).lastError, /Interrupted/);
});
