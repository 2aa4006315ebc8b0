/**
 * The spam guard on PostgreSQL, as two instances sharing the database see it: one signing key
 * for both, a challenge answered on one is a replay on the other (also when both see it at
 * once), and a client's window counts its submissions to either.
 */
import t from 'tap';
import { postgresStepDatabase } from '../../src/db/postgres-steps.js';
import { SpamGuard, type Submission } from '../../src/spam-guard/guard.js';
import { postgresAdapters } from '../../src/stores/postgres.js';
import { openTestPostgres, postgresTests, startPostgres } from '../helpers/postgres.js';
import { solve } from './helpers.js';
import { sql } from '../../src/db/orm.js';

t.setTimeout(300_000);

const submission = (proof: string | null, clientAddress = '203.0.113.5'): Submission => ({
  siteId: 'site-1',
  form: 'comment',
  clientAddress,
  proof,
  honeypot: '',
  texts: ['Ada', 'Well said.'],
  blockedWords: [],
});

postgresTests(() => {
  t.test('two instances: one key, a replay refused on the other, one window per client', async (t) => {
    const url = await startPostgres(t);
    const clock = { now: Date.now() };
    const instance = async () =>
      new SpamGuard(postgresStepDatabase(await openTestPostgres(t, url), postgresAdapters), {
        difficulty: 200,
        challengeTtlMs: 3_600_000,
        minFillMs: 3000,
        rateMax: 3,
        rateWindowMs: 60_000,
        clock: () => clock.now,
      });
    const [a, b] = [await instance(), await instance()];

    // Both made their keys at once: whichever stored first signs for both.
    const [fromA, fromB] = await Promise.all([a.challenge('site-1', 'comment'), b.challenge('site-1', 'comment')]);
    const [proofA, proofB] = [await solve(fromA), await solve(fromB)];
    clock.now += 10_000;
    t.same(await b.check(submission(proofA, '198.51.100.1')), { outcome: 'pass' }, "a's challenge answered on b");
    t.same(await a.check(submission(proofA, '198.51.100.2')), { outcome: 'refuse', status: 400, field: 'altcha', reason: 'the challenge was already used' });

    // The same answer sent to both at once: exactly one accepts it.
    const verdicts = await Promise.all([a.check(submission(proofB, '198.51.100.3')), b.check(submission(proofB, '198.51.100.4'))]);
    t.same(verdicts.map((verdict) => verdict.outcome).sort(), ['pass', 'refuse']);

    // One client's submissions to either instance share its window.
    for (const guard of [a, b, a]) t.equal((await guard.check(submission(null))).outcome, 'hold');
    t.match(await b.check(submission(null)), { outcome: 'refuse', status: 429, retryAfterSeconds: 60 });

    const pg = await openTestPostgres(t, url);
    const rows = await pg.db.execute(sql`select key from spam_guard_windows union all select id from spam_guard_challenges`);
    t.notMatch(JSON.stringify(rows.rows), '203.0.113.5', 'no address stored');
    clock.now += 3 * 3_600_000;
    t.ok((await a.purge()) >= 3, 'expired challenges and old windows purged');
    t.equal(Number((await pg.db.execute(sql`select count(*) as n from spam_guard_challenges`)).rows[0]!.n), 0);
  });
});
