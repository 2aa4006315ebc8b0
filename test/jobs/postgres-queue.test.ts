import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import t, { type Test } from 'tap';
import { jobs } from '../../src/db/pg-schema.js';
import { postgresStepDatabase } from '../../src/db/postgres-steps.js';
import { enqueueSteps, JobQueue, type JobRow } from '../../src/jobs/store.js';
import { postgresAdapters, postgresStores } from '../../src/stores/postgres.js';
import { EFFECT, MARKS, markSteps } from '../helpers/job-effect.js';
import { insertSite, markCount, SITE_ID } from '../helpers/pg-job-effect.js';
import { nodeArgs } from '../helpers/built.js';
import { openTestPostgres, postgresTests, startPostgres } from '../helpers/postgres.js';
import { and, count, eq, inArray, sql } from '../../src/db/orm.js';

// The job queue on PostgreSQL, tested against a throwaway PostgreSQL: its rules
// (test/jobs/loop.test.ts tests them on SQLite through the loop), then what only a database
// shared by several instances can show: concurrent claims, and a worker killed mid-batch.

const NOTE = 'note';
const T0 = Date.parse('2026-11-22T10:00:00.000Z');
const LEASE_MS = 60_000;
const EXPIRED = 'Lease expired: the worker running it stopped answering';

postgresTests(defineQueueTests);

const open = (t: Test, url: string, poolMax = 4) => openTestPostgres(t, url, { poolMax });

async function setup(t: Test) {
  const url = await startPostgres(t);
  const handle = await open(t, url);
  await insertSite(handle.db);
  const stores = postgresStores(handle);
  // Every kind but the tests' own marks.
  const queue = stores.jobs.scoped({ except: MARKS });
  const addJobs = (n: number, { dueInMs = 0, maxAttempts = 3, kind = NOTE, createdAt = T0, groupId = null as string | null } = {}) =>
    queue.enqueue(
      SITE_ID,
      Array.from({ length: n }, (_, i) => ({ kind, payload: { text: `Note ${i}` }, scheduledFor: new Date(T0 + dueInMs), groupId })),
      maxAttempts,
      new Date(createdAt),
    );
  const job = (id: string, kind = NOTE) => queue.get(SITE_ID, kind, id);
  const setAttempts = (id: string, attempts: number) => handle.db.update(jobs).set({ attempts }).where(eq(jobs.id, id));
  const effectCount = () => markCount(handle.db, EFFECT);
  return { url, handle, stores, queue, addJobs, job, setAttempts, effectCount };
}

const ids = (rows: readonly JobRow[]) => rows.map((row) => row.id);

function defineQueueTests() {
  t.test('claims take due jobs only, oldest due first, then oldest submitted, then in batch order, up to the limit', async (t) => {
    const s = await setup(t);
    const later = await s.addJobs(3, { dueInMs: 1000, createdAt: T0 + 10 });
    const earlier = await s.addJobs(2, { dueInMs: 1000, createdAt: T0 });
    const [first] = await s.addJobs(1, { createdAt: T0 + 20 });

    const claimed = await s.queue.claim('w1', 10, T0, LEASE_MS);
    t.same(ids(claimed), [first.id], 'only what is due');
    t.match(claimed[0], {
      status: 'running',
      attempts: 1,
      leaseOwner: 'w1',
      leaseUntil: new Date(T0 + LEASE_MS),
      startedAt: new Date(T0),
      updatedAt: new Date(T0),
      payload: { text: 'Note 0' },
    });
    t.same(await s.job(first.id), claimed[0], 'the claimed row is the stored row');
    t.same(await s.queue.claim('w1', 10, T0 + 999, LEASE_MS), [], 'nothing else due yet');

    t.same(await s.queue.claim('w1', 0, T0 + 1000, LEASE_MS), [], 'a limit of 0 claims nothing');
    t.same(ids(await s.queue.claim('w1', 3, T0 + 1000, LEASE_MS)), [...ids(earlier), later[0].id], 'up to the limit, in order');
    t.same(ids(await s.queue.claim('w2', 10, T0 + 1000, LEASE_MS)), ids(later.slice(1)));
    t.same(await s.queue.claim('w2', 10, T0 + 5000, LEASE_MS), [], 'a running job is not claimed again');
  });

  t.test('a queue scoped to some kinds claims and releases only those', async (t) => {
    const s = await setup(t);
    const [note] = await s.addJobs(1);
    const [delivery] = await s.addJobs(1, { kind: 'delivery' });
    const deliveries = s.stores.jobs.scoped({ only: ['delivery'] });
    const allButDeliveries = s.stores.jobs.scoped({ except: ['delivery'] });
    t.same(ids(await deliveries.claim('w1', 10, T0, LEASE_MS)), [delivery.id]);
    t.same(ids(await allButDeliveries.claim('w2', 10, T0, LEASE_MS)), [note.id]);

    const expiry = T0 + LEASE_MS + 1;
    t.equal(await deliveries.release(expiry, expiry, EXPIRED), 1);
    t.equal((await s.job(delivery.id, 'delivery')).status, 'pending');
    t.equal((await s.job(note.id)).status, 'running', 'another kind is left alone');
    t.equal(await s.stores.jobs.release(expiry, expiry, EXPIRED), 1, 'an unscoped queue releases every kind');
  });

  t.test('heartbeats extend the leases a worker holds, and only those', async (t) => {
    const s = await setup(t);
    const [a, b] = await s.addJobs(2);
    await s.queue.claim('w1', 1, T0, LEASE_MS);
    await s.queue.claim('w2', 1, T0, LEASE_MS);
    await s.queue.heartbeat('w1', [a.id, b.id], T0 + 50_000, LEASE_MS);
    await s.queue.heartbeat('w1', [], T0 + 50_000, LEASE_MS);
    t.equal((await s.job(a.id)).leaseUntil?.getTime(), T0 + 110_000, 'lease extended');
    t.equal((await s.job(b.id)).leaseUntil?.getTime(), T0 + LEASE_MS, "another worker's lease is not");
    const at = T0 + 100_000;
    t.equal(await s.queue.release(at, at, EXPIRED), 1, 'only the lease that was not renewed expires');
    t.equal((await s.job(a.id)).status, 'running');
    t.equal((await s.job(b.id)).status, 'pending');
  });

  t.test('expired leases go back to pending, or fail when no attempts are left; all of them at start-up', async (t) => {
    const s = await setup(t);
    const [resumed, exhausted, fresh] = await s.addJobs(3);
    await s.queue.claim('dead', 2, T0, LEASE_MS);
    await s.setAttempts(exhausted.id, 3);
    t.equal(await s.queue.release(T0 + LEASE_MS, T0 + LEASE_MS, EXPIRED), 0, 'a lease ending at the cutoff has not expired');

    const at = T0 + LEASE_MS + 1;
    t.equal(await s.queue.release(at, at, EXPIRED), 2);
    t.match(await s.job(resumed.id), { status: 'pending', attempts: 1, runAfter: new Date(at), updatedAt: new Date(at), finishedAt: null, lastError: EXPIRED, leaseOwner: null, leaseUntil: null });
    t.match(await s.job(exhausted.id), {
      status: 'failed',
      attempts: 3,
      runAfter: new Date(T0),
      finishedAt: new Date(at),
      lastError: `${EXPIRED}; no attempts left`,
      leaseOwner: null,
      leaseUntil: null,
    });
    t.equal((await s.job(fresh.id)).status, 'pending', 'a pending job is not touched');

    t.equal((await s.queue.claim('dead', 10, at, LEASE_MS)).length, 2);
    t.equal(await s.queue.release(at + 1, null, 'Interrupted'), 2, 'start-up: released however long their lease');
    t.match(await s.job(resumed.id), { status: 'pending', attempts: 2, lastError: 'Interrupted', runAfter: new Date(at + 1) });
    t.match(await s.job(fresh.id), { status: 'pending', attempts: 1, lastError: 'Interrupted' });
  });

  t.test('a job given back is pending again, its attempt not held against it', async (t) => {
    const s = await setup(t);
    const [job] = await s.addJobs(1, { dueInMs: -5000 });
    await s.queue.claim('w1', 1, T0, LEASE_MS);
    await s.queue.giveBack('w2', job.id, T0 + 10);
    t.equal((await s.job(job.id)).status, 'running', 'only by the worker holding it');
    await s.queue.giveBack('w1', job.id, T0 + 10);
    t.match(await s.job(job.id), { status: 'pending', attempts: 0, runAfter: new Date(T0 + 10), updatedAt: new Date(T0 + 10), leaseOwner: null, leaseUntil: null });
  });

  t.test('a job deferred for an unavailable dependency waits without spending an attempt', async (t) => {
    const s = await setup(t);
    const [job] = await s.addJobs(1, { maxAttempts: 1 });
    let now = T0;
    for (const round of [1, 2]) {
      const [claimed] = await s.queue.claim('w1', 1, now, LEASE_MS);
      t.equal(claimed?.attempts, 1, `wait ${round}: claimed, its only attempt`);
      t.equal(await s.queue.defer('w1', job.id, 'The generator is unreachable', now + 1000, now), true);
      t.match(await s.job(job.id), { status: 'pending', attempts: 0, waits: round, runAfter: new Date(now + 1000), updatedAt: new Date(now), lastError: 'The generator is unreachable', leaseOwner: null });
      t.same(await s.queue.claim('w1', 1, now + 999, LEASE_MS), [], 'not before it is due again');
      now += 1000;
    }
    t.equal(await s.queue.defer('w1', job.id, 'again', T0, T0), false, 'not held: the lease was lost');
  });

  t.test('a failed attempt is retried when told, then fails for good when out of attempts or permanent', async (t) => {
    const s = await setup(t);
    const [flaky, broken] = await s.addJobs(2, { maxAttempts: 2 });
    const [lost] = await s.addJobs(1, { maxAttempts: 2, dueInMs: 2000 });
    const failedInside: string[] = [];
    const onFailed = (id: string) =>
      function* () {
        yield* markSteps(EFFECT, SITE_ID, id);
        failedInside.push(id);
      };
    let [claimed] = await s.queue.claim('w1', 1, T0, LEASE_MS);
    t.equal(await s.queue.fail('w1', claimed, 'flaky 1', false, T0 + 1000, T0 + 10, onFailed(flaky.id)), 'retry');
    t.match(await s.job(flaky.id), { status: 'pending', attempts: 1, runAfter: new Date(T0 + 1000), finishedAt: null, lastError: 'flaky 1', leaseOwner: null });
    t.same(failedInside, [], 'a retry is not a settled failure');

    [claimed] = await s.queue.claim('w1', 1, T0 + 999, LEASE_MS);
    t.not(claimed?.id, flaky.id, 'not before its backoff ends');
    t.equal(claimed.id, broken.id);
    t.equal(await s.queue.fail('w1', claimed, 'Unknown model', true, T0 + 5000, T0 + 999, onFailed(broken.id)), 'failed', 'permanent: failed at its first attempt');
    t.match(await s.job(broken.id), { status: 'failed', attempts: 1, runAfter: new Date(T0), finishedAt: new Date(T0 + 999), lastError: 'Unknown model' });

    [claimed] = await s.queue.claim('w1', 1, T0 + 1000, LEASE_MS);
    t.equal(claimed.id, flaky.id);
    t.equal(claimed.attempts, 2);
    t.equal(await s.queue.fail('w1', claimed, 'flaky 2', false, T0 + 3000, T0 + 1500, onFailed(flaky.id)), 'failed', 'out of attempts');
    t.match(await s.job(flaky.id), { status: 'failed', attempts: 2, runAfter: new Date(T0 + 1000), finishedAt: new Date(T0 + 1500), lastError: 'flaky 2', leaseOwner: null });
    t.same(failedInside.sort(), [broken.id, flaky.id].sort());
    t.equal(await s.effectCount(), 2, "onFailed's writes committed with the failure");

    [claimed] = await s.queue.claim('w1', 1, T0 + 2000, LEASE_MS);
    t.equal(claimed.id, lost.id);
    t.equal(await s.queue.fail('w2', claimed, 'not mine', true, T0, T0, onFailed(lost.id)), 'lease lost');
    t.equal((await s.job(lost.id)).status, 'running');
    t.equal(failedInside.length, 2, 'onFailed did not run');
  });

  t.test('cancel: a pending job only', async (t) => {
    const s = await setup(t);
    const [running, pending] = await s.addJobs(2);
    t.same(ids(await s.queue.claim('w1', 1, T0, LEASE_MS)), [running.id]);
    const cancelled = await s.queue.cancel(SITE_ID, NOTE, pending.id, new Date(T0 + 5));
    t.match(cancelled, { status: 'cancelled', finishedAt: new Date(T0 + 5), updatedAt: new Date(T0 + 5) });
    t.same(await s.job(pending.id), cancelled, 'what it returns is what is stored');
    await t.rejects(s.queue.cancel(SITE_ID, NOTE, pending.id), { code: 'CONFLICT', message: /this one is cancelled/ });
    await t.rejects(s.queue.cancel(SITE_ID, NOTE, running.id), { code: 'CONFLICT', message: /this one is running/ });
    await t.rejects(s.queue.cancel('other-site', NOTE, running.id), { code: 'NOT_FOUND' });
    await t.rejects(s.queue.cancel(SITE_ID, 'other-kind', running.id), { code: 'NOT_FOUND' });
    t.equal((await s.job(running.id)).status, 'running', 'a refused cancel changes nothing');
    t.same(await s.queue.claim('w1', 10, T0 + 10, LEASE_MS), [], 'a cancelled job is never claimed');
  });

  t.test('success commits the effect with it, only while the worker holds the lease', async (t) => {
    const s = await setup(t);
    const [job] = await s.addJobs(1);
    await s.queue.claim('w1', 1, T0, LEASE_MS);
    // w1 stops answering; its lease expires and w2 takes the job.
    const at = T0 + LEASE_MS + 1;
    t.equal(await s.queue.release(at, at, EXPIRED), 1);
    t.equal((await s.queue.claim('w2', 1, at, LEASE_MS))[0]?.attempts, 2);

    function* effect() {
      return { effectId: yield* markSteps(EFFECT, SITE_ID, job.id) };
    }
    let lateCommits = 0;
    const late = await s.queue.succeed('w1', job.id, at + 10, function* () {
      lateCommits++;
      return yield* effect();
    });
    t.equal(late, false, 'the lease was lost');
    t.equal(lateCommits, 0, 'its effect is not even attempted');
    t.equal(await s.effectCount(), 0);

    const failing = s.queue.succeed('w2', job.id, at + 20, function* () {
      yield* effect();
      throw new Error('the effect failed halfway');
    });
    await t.rejects(failing, /halfway/);
    t.equal(await s.effectCount(), 0, 'a failed commit leaves nothing behind');
    t.equal((await s.job(job.id)).status, 'running');

    t.equal(await s.queue.succeed('w2', job.id, at + 30, effect), true);
    const [mark] = await s.handle.db.select().from(jobs).where(eq(jobs.kind, EFFECT));
    t.match(await s.job(job.id), { status: 'succeeded', result: { effectId: mark!.id }, finishedAt: new Date(at + 30), updatedAt: new Date(at + 30), lastError: null, leaseOwner: null, leaseUntil: null });
    t.equal(mark!.groupId, job.id);
    t.equal(await s.queue.succeed('w2', job.id, at + 40, effect), false, 'never twice');
    t.equal(await s.effectCount(), 1);
  });

  t.test('a lease cannot be released while its job commits its success', async (t) => {
    const s = await setup(t);
    const [job] = await s.addJobs(1);
    await s.queue.claim('w1', 1, T0, LEASE_MS);
    let inCommit!: () => void;
    let finishCommit!: () => void;
    const committing = new Promise<void>((resolve) => (inCommit = resolve));
    const finished = new Promise<void>((resolve) => (finishCommit = resolve));
    // The same queue over a database whose insert of the effect waits to be let through.
    const { jobs: answers } = postgresAdapters;
    const slow = postgresStepDatabase(s.handle, {
      ...postgresAdapters,
      jobs: {
        ...answers,
        async insert(tx, rows) {
          inCommit();
          await finished;
          return answers.insert(tx, rows);
        },
      },
    });
    const succeeded = new JobQueue(slow, { soleWorker: false }).succeed('w1', job.id, T0 + 100, () => markSteps(EFFECT, SITE_ID, job.id));
    await committing;
    const at = T0 + LEASE_MS + 1;
    // The committing transaction holds the row: release passes it by rather than wait.
    t.equal(await s.queue.release(at, at, EXPIRED), 0, 'skipped, not waited for');
    t.same(await s.queue.claim('w2', 1, at, LEASE_MS), []);
    finishCommit();
    t.equal(await succeeded, true);
    t.equal((await s.job(job.id)).status, 'succeeded');
    t.equal(await s.queue.release(at, at, EXPIRED), 0, 'nothing left to release');
  });

  t.test('get, list (paged, by group and status), and purge of finished jobs', async (t) => {
    const s = await setup(t);
    const batch = await s.addJobs(3, { groupId: 'batch-1', createdAt: T0 });
    const [single] = await s.addJobs(1, { createdAt: T0 + 1 });
    const [delivery] = await s.addJobs(1, { kind: 'delivery', createdAt: T0 + 2 });

    await t.rejects(s.queue.get(SITE_ID, NOTE, delivery.id), { code: 'NOT_FOUND' }, 'another kind');
    await t.rejects(s.queue.get('other-site', NOTE, single.id), { code: 'NOT_FOUND' }, 'another site');
    await t.rejects(s.queue.get(SITE_ID, NOTE, 'no-such-job'), { code: 'NOT_FOUND' });

    const first = await s.queue.list(SITE_ID, NOTE, { page: 1, limit: 3 });
    t.same(ids(first.items), [single.id, ...ids(batch.slice(0, 2))], 'newest first, a batch in its order');
    t.same(first.pagination, { page: 1, limit: 3, total: 4, pages: 2 });
    const second = await s.queue.list(SITE_ID, NOTE, { page: 2, limit: 3 });
    t.same(ids(second.items), [batch[2].id]);
    t.same(ids((await s.queue.list(SITE_ID, NOTE, { page: 1, limit: 10, groupId: 'batch-1' })).items), ids(batch));

    // The batch's first two run: one succeeds early, one late; the delivery succeeds early.
    const deliveries = s.stores.jobs.scoped({ only: ['delivery'] });
    const answer = (value: unknown) =>
      function* () {
        return value;
      };
    await deliveries.claim('w1', 1, T0, LEASE_MS);
    await deliveries.succeed('w1', delivery.id, T0 + 100, answer(null));
    const [early, late] = await s.queue.claim('w1', 2, T0, LEASE_MS);
    await s.queue.succeed('w1', early.id, T0 + 100, answer('early'));
    await s.queue.succeed('w1', late.id, T0 + 300, answer('late'));
    const succeeded = await s.queue.list(SITE_ID, NOTE, { page: 1, limit: 10, status: 'succeeded' });
    t.same(ids(succeeded.items), [early.id, late.id]);
    t.equal(succeeded.pagination.total, 2);

    t.equal(await s.queue.purgeFinished(NOTE, new Date(T0 + 200)), 1, 'finished before the cutoff, of that kind');
    await t.rejects(s.queue.get(SITE_ID, NOTE, early.id), { code: 'NOT_FOUND' });
    t.equal((await s.job(late.id)).result, 'late');
    t.equal((await s.job(delivery.id, 'delivery')).status, 'succeeded', 'another kind is kept');
    t.equal((await s.queue.list(SITE_ID, NOTE, { page: 1, limit: 10 })).pagination.total, 3);
  });

  t.test("jobs enqueued in a caller's transaction are added with it, or not at all", async (t) => {
    const s = await setup(t);
    const item = { kind: NOTE, payload: { nested: { list: [1, 'two'] } }, scheduledFor: new Date(T0) };
    await t.rejects(
      s.stores.db.write(function* () {
        yield* enqueueSteps(SITE_ID, [item], 3, new Date(T0));
        throw new Error('the caller changes its mind');
      }),
      /changes its mind/,
    );
    t.equal((await s.queue.list(SITE_ID, NOTE, { page: 1, limit: 10 })).pagination.total, 0);
    const [added] = await s.stores.db.write(() => enqueueSteps(SITE_ID, [item], 3, new Date(T0)));
    t.same((await s.job(added.id)).payload, item.payload);

    const many = await s.queue.enqueue(SITE_ID, Array.from({ length: 2500 }, (_, i) => ({ ...item, position: i })), 3, new Date(T0));
    t.equal(many.length, 2500);
    t.equal((await s.queue.list(SITE_ID, NOTE, { page: 1, limit: 1 })).pagination.total, 2501, 'more rows than one insert takes');
  });

  t.test('two instances claiming at once from 500 due jobs claim each exactly once', async (t) => {
    const s = await setup(t);
    await s.addJobs(500);
    const instances = [s.handle, await open(t, s.url, 4)];
    const claimedBy = new Map<string, string[]>();
    // Each instance claims from four loops at once, as fast as it can, until nothing is left.
    const claimers = instances.flatMap((handle, instance) =>
      Array.from({ length: 4 }, async (_, loop) => {
        const queue = postgresStores(handle).jobs;
        const owner = `instance-${instance}-loop-${loop}`;
        const mine: string[] = [];
        claimedBy.set(owner, mine);
        for (;;) {
          const claimed = await queue.claim(owner, 5, T0, LEASE_MS);
          if (claimed.length === 0) return;
          mine.push(...ids(claimed));
        }
      }),
    );
    await Promise.all(claimers);
    const all = [...claimedBy.values()].flat();
    t.equal(all.length, 500, '500 claims');
    t.equal(new Set(all).size, 500, 'no job claimed twice');
    for (const instance of [0, 1]) {
      const claims = [...claimedBy].filter(([owner]) => owner.startsWith(`instance-${instance}-`)).flatMap(([, mine]) => mine).length;
      t.ok(claims > 0, `instance ${instance} claimed ${claims}`);
    }
    const [{ n }] = await s.handle.db
      .select({ n: count() })
      .from(jobs)
      .where(and(eq(jobs.status, 'running'), eq(jobs.attempts, 1), sql`${jobs.leaseOwner} is not null`));
    t.equal(n, 500, 'every job running once, leased to the loop that claimed it');
  });

  t.test('a worker killed mid-batch: the survivor finishes every job, each with exactly one effect', async (t) => {
    const s = await setup(t);
    const batch = await s.addJobs(100);
    const startWorker = (env: Record<string, string>) => {
      const child = spawn(process.execPath, nodeArgs('test/helpers/pg-queue-worker.ts'), {
        env: { ...process.env, DATABASE_URL: s.url, LEASE_MS: '1500', ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const worker = { child, output: '', exit: once(child, 'exit') };
      child.stdout!.on('data', (chunk) => (worker.output += chunk));
      child.stderr!.on('data', (chunk) => (worker.output += chunk));
      return worker;
    };
    // The victim stops making progress, holding its last claim, once it has 15 successes.
    const victim = startWorker({ HOLD_AFTER: '15' });
    const survivor = startWorker({});
    const workers = [victim, survivor];
    t.teardown(() => workers.forEach(({ child }) => child.exitCode === null && child.kill('SIGKILL')));
    const until = async (what: string, done: () => boolean, ms = 60_000) => {
      const deadline = Date.now() + ms;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${workers.map((w) => w.output).join('\n---\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

    await until('both workers ready', () => workers.every((w) => w.output.includes('ready') || exited(w.child)));
    for (const { child } of workers) child.stdin!.write('go\n');
    await until('the victim holding jobs', () => victim.output.includes('holding') || exited(victim.child));
    victim.child.kill('SIGKILL');
    t.same(await victim.exit, [null, 'SIGKILL'], 'killed, no clean exit');
    const held = await s.handle.db
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.status, 'running'), eq(jobs.leaseOwner, `worker-${victim.child.pid}`)));
    t.ok(held.length > 0, `the victim died holding ${held.length} leases`);

    await until('the survivor to finish', () => exited(survivor.child));
    t.same(await survivor.exit, [0, null], 'the survivor finished cleanly');
    t.match(survivor.output, /done\n$/);

    const finished = await s.handle.db.select().from(jobs).where(eq(jobs.kind, NOTE));
    t.equal(finished.length, 100);
    t.same(
      finished.filter((job) => job.status !== 'succeeded').map((job) => `${job.id}: ${job.status}`),
      [],
      'every job succeeded',
    );
    const heldAgain = await s.handle.db.select().from(jobs).where(inArray(jobs.id, held.map((job) => job.id)));
    t.ok(
      heldAgain.every((job) => job.attempts === 2 && job.lastError === null),
      "the dead worker's jobs ran a second attempt",
    );
    const effects = await s.handle.db.select().from(jobs).where(eq(jobs.kind, EFFECT));
    t.equal(effects.length, 100, 'exactly 100 effects');
    const effectOf = new Map(effects.map((effect) => [effect.groupId, effect.id]));
    t.equal(effectOf.size, 100, 'no job with two effects');
    t.same(
      batch.filter((job) => !effectOf.has(job.id)).map((job) => job.id),
      [],
      'no job without its effect',
    );
    t.ok(
      finished.every((job) => (job.result as { effectId: string }).effectId === effectOf.get(job.id)),
      "each job's result names its own effect",
    );
  });
}
