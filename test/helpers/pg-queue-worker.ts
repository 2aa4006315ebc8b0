// A child process of test/jobs/postgres-queue.test.ts: one instance of the service working through
// the job queue on PostgreSQL at DATABASE_URL as JobLoop does, in rounds: release expired
// leases, claim up to 4 due jobs, run them (20–80 ms each), renew their leases, and record each
// success with its effect (a mark, see job-effect.ts). It says `ready` once connected, starts
// when told `go` on stdin (so that the workers start together), prints `claimed <ids>` after
// each claim, and `done` once no job is left pending or running.
//
// With HOLD_AFTER=n, after n successes it claims once more, prints `holding`, and makes no more
// progress, keeping those jobs: the test kills it then, certain that it dies holding leases.
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { jobs } from '../../src/db/pg-schema.js';
import { openPostgres } from '../../src/db/postgres.js';
import { postgresStores } from '../../src/stores/postgres.js';
import { EFFECT, MARKS, markSteps } from './job-effect.js';
import { SITE_ID } from './pg-job-effect.js';
import { and, inArray, notInArray } from '../../src/db/orm.js';

const CLAIM_LIMIT = 4;
const IDLE_POLL_MS = 50;
const leaseMs = Number(process.env.LEASE_MS);
const holdAfter = process.env.HOLD_AFTER ? Number(process.env.HOLD_AFTER) : Infinity;

const handle = await openPostgres(process.env.DATABASE_URL!, { poolMax: CLAIM_LIMIT });
const queue = postgresStores(handle).jobs.scoped({ except: MARKS });
const owner = `worker-${process.pid}`;
const anyUnfinished = async () =>
  (await handle.db.select({ id: jobs.id }).from(jobs).where(and(inArray(jobs.status, ['pending', 'running']), notInArray(jobs.kind, MARKS))).limit(1)).length > 0;

process.stdout.write('ready\n');
await once(process.stdin, 'data');

let succeeded = 0;
for (;;) {
  const now = Date.now();
  await queue.release(now, now, 'Lease expired: the worker running it stopped answering');
  const claimed = await queue.claim(owner, CLAIM_LIMIT, now, leaseMs);
  if (claimed.length === 0) {
    if (!(await anyUnfinished())) break;
    await sleep(IDLE_POLL_MS);
    continue;
  }
  process.stdout.write(`claimed ${claimed.map((job) => job.id).join(' ')}\n`);
  if (succeeded >= holdAfter) {
    process.stdout.write('holding\n');
    await new Promise(() => setInterval(() => {}, 60_000)); // until killed
  }
  await Promise.all(claimed.map(() => sleep(20 + Math.random() * 60)));
  await queue.heartbeat(owner, claimed.map((job) => job.id), Date.now(), leaseMs);
  for (const job of claimed) {
    const effect = function* () {
      return { effectId: yield* markSteps(EFFECT, SITE_ID, job.id) };
    };
    if (await queue.succeed(owner, job.id, Date.now(), effect)) succeeded++;
  }
}

await handle.close();
process.stdout.write('done\n');
process.stdin.destroy();
