/**
 * The spam guard's rules, each broken once (refused, held or marked spam, with its reason) and
 * an ordinary submission passing, on SQLite; replays across two guards sharing the database.
 */
import t, { type Test } from 'tap';
import { openDatabase } from '../../src/db/sqlite.js';
import { sqliteStepDatabase } from '../../src/db/sqlite-steps.js';
import { SpamGuard, type SpamGuardOptions, type Submission } from '../../src/spam-guard/guard.js';
import { sqliteAdapters } from '../../src/stores/sqlite.js';
import { tempDataDir } from '../helpers/app.js';
import { solve } from './helpers.js';
import { sql } from '../../src/db/orm.js';

const SITE = 'site-1';

function setup(t: Test, options: Partial<SpamGuardOptions> = {}) {
  const handle = openDatabase(tempDataDir(t));
  t.teardown(() => handle.close());
  const db = sqliteStepDatabase(handle.db, sqliteAdapters);
  const clock = { now: Date.now() };
  const make = () =>
    new SpamGuard(db, { difficulty: 200, challengeTtlMs: 3_600_000, minFillMs: 3000, rateMax: 5, rateWindowMs: 60_000, clock: () => clock.now, ...options });
  return { guard: make(), make, clock, handle };
}

const ordinary = (proof: string | null, extra: Partial<Submission> = {}): Submission => ({
  siteId: SITE,
  form: 'comment',
  clientAddress: '203.0.113.9',
  proof,
  honeypot: '',
  texts: ['Ada', 'A thoughtful reply, see https://example.org/notes for more.'],
  blockedWords: ['casino', 'cheap pills'],
  ...extra,
});

t.test('an ordinary submission with a solved challenge, shown long enough ago, passes', async (t) => {
  const { guard, clock } = setup(t);
  const proof = await solve(await guard.challenge(SITE, 'comment'));
  clock.now += 20_000;
  t.same(await guard.check(ordinary(proof)), { outcome: 'pass' });
});

t.test('a challenge is good once: its replay is refused, also by another guard on the same database', async (t) => {
  const { guard, make, clock } = setup(t);
  const proof = await solve(await guard.challenge(SITE, 'comment'));
  clock.now += 20_000;
  t.same(await guard.check(ordinary(proof)), { outcome: 'pass' });
  t.same(await guard.check(ordinary(proof)), { outcome: 'refuse', status: 400, field: 'altcha', reason: 'the challenge was already used' });
  t.same(await make().check(ordinary(proof, { clientAddress: '198.51.100.1' })), { outcome: 'refuse', status: 400, field: 'altcha', reason: 'the challenge was already used' });
});

t.test('no proof of work (no JavaScript) is held', async (t) => {
  const { guard } = setup(t);
  t.same(await guard.check(ordinary(null)), { outcome: 'hold', reason: 'no proof of work (sent without JavaScript)' });
});

t.test('a wrong, forged, foreign or unreadable proof is refused naming the field', async (t) => {
  const { guard, clock } = setup(t);
  const challenge = await guard.challenge(SITE, 'comment');
  const good = JSON.parse(Buffer.from(await solve(challenge), 'base64').toString()) as { challenge: typeof challenge; solution: { counter: number; derivedKey: string } };
  clock.now += 20_000;
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

  const key = good.solution.derivedKey;
  const wrong = encode({ ...good, solution: { ...good.solution, derivedKey: `${key.slice(0, -1)}${key.endsWith('0') ? '1' : '0'}` } });
  t.match(await guard.check(ordinary(wrong)), { outcome: 'refuse', status: 400, field: 'altcha', reason: 'the proof of work is wrong' });

  // Easier parameters, same signature: the signature no longer matches.
  const forged = encode({ ...good, challenge: { ...good.challenge, parameters: { ...good.challenge.parameters, keyPrefix: '00' } } });
  t.match(await guard.check(ordinary(forged)), { outcome: 'refuse', field: 'altcha', reason: 'the challenge was not issued here' });

  // Another guard (another installation's key) issued it.
  const { guard: stranger } = setup(t);
  const theirs = await solve(await stranger.challenge(SITE, 'comment'));
  t.match(await guard.check(ordinary(theirs)), { outcome: 'refuse', field: 'altcha', reason: 'the challenge was not issued here' });

  t.match(await guard.check(ordinary('not base64 json')), { outcome: 'refuse', field: 'altcha', reason: 'the proof of work is not readable' });
});

t.test('a challenge issued for another site or form is refused', async (t) => {
  const { guard, clock } = setup(t);
  const otherSite = await solve(await guard.challenge('site-2', 'comment'));
  const otherForm = await solve(await guard.challenge(SITE, 'subscribe'));
  clock.now += 20_000;
  t.match(await guard.check(ordinary(otherSite)), { outcome: 'refuse', reason: 'the challenge was issued for another form' });
  t.match(await guard.check(ordinary(otherForm)), { outcome: 'refuse', reason: 'the challenge was issued for another form' });
});

t.test('an expired challenge is held', async (t) => {
  const { guard, clock } = setup(t);
  // Issued three hours ago with a one-hour life.
  clock.now -= 3 * 3_600_000;
  const proof = await solve(await guard.challenge(SITE, 'comment'));
  clock.now += 3 * 3_600_000;
  t.same(await guard.check(ordinary(proof)), { outcome: 'hold', reason: 'the proof of work came after its challenge expired' });
});

t.test('a filled honeypot is spam', async (t) => {
  const { guard, clock } = setup(t);
  const proof = await solve(await guard.challenge(SITE, 'comment'));
  clock.now += 20_000;
  t.same(await guard.check(ordinary(proof, { honeypot: 'https://spam.example' })), { outcome: 'spam', reason: 'honeypot field filled' });
});

t.test('a form sent sooner than the minimum fill time is spam', async (t) => {
  const { guard, clock } = setup(t);
  const proof = await solve(await guard.challenge(SITE, 'comment'));
  clock.now += 1200;
  t.same(await guard.check(ordinary(proof)), { outcome: 'spam', reason: 'submitted 1.2 s after the form was shown' });
});

t.test('more than 3 links are held, bare domains counted too; 3 pass', async (t) => {
  const { guard, clock } = setup(t);
  clock.now -= 20_000;
  const [a, b] = [await solve(await guard.challenge(SITE, 'comment')), await solve(await guard.challenge(SITE, 'comment'))];
  clock.now += 20_000;
  const five = 'https://a.example/1 http://b.example www.c-shop.org d-shop.com and https://e.example/?x=1';
  t.same(await guard.check(ordinary(a, { texts: ['Ada', five] })), { outcome: 'hold', reason: '5 links' });
  t.same(await guard.check(ordinary(b, { texts: ['Ada', 'https://a.example https://b.example https://c.example'] })), { outcome: 'pass' });
});

t.test("a site's blocked word is spam, as a whole word, whatever its case, accents or hidden characters", async (t) => {
  const { guard, clock } = setup(t);
  clock.now -= 20_000;
  const proofs = [];
  for (let i = 0; i < 4; i++) proofs.push(await solve(await guard.challenge(SITE, 'comment')));
  clock.now += 20_000;
  t.same(await guard.check(ordinary(proofs[0]!, { texts: ['Ada', 'Best CASINO in town'] })), { outcome: 'spam', reason: 'blocked word "casino"' });
  t.same(await guard.check(ordinary(proofs[1]!, { texts: ['Ada', 'Buy cheap\u200b pills'] })), { outcome: 'spam', reason: 'blocked word "cheap pills"' });
  t.same(await guard.check(ordinary(proofs[2]!, { texts: ['Cásíno Royale', 'hi'] })), { outcome: 'spam', reason: 'blocked word "casino"' });
  t.same(await guard.check(ordinary(proofs[3]!, { texts: ['Ada', 'The casinos of Monte Carlo'] })), { outcome: 'pass' }, 'a longer word is another word');
});

t.test('more submissions than the window allows from one address are refused with a wait; other addresses and later windows pass', async (t) => {
  const { guard, clock } = setup(t, { rateMax: 2, rateWindowMs: 60_000 });
  const from = (clientAddress: string) => ordinary(null, { clientAddress });
  t.equal((await guard.check(from('192.0.2.1'))).outcome, 'hold');
  clock.now += 10_000;
  t.equal((await guard.check(from('192.0.2.1'))).outcome, 'hold');
  clock.now += 10_000;
  t.same(await guard.check(from('192.0.2.1')), { outcome: 'refuse', status: 429, reason: 'more than 2 submissions in 60 s', retryAfterSeconds: 40 });
  t.equal((await guard.check(from('192.0.2.2'))).outcome, 'hold', 'another address has its own window');
  t.equal((await guard.check({ ...from('192.0.2.1'), siteId: 'site-2' })).outcome, 'hold', 'another site has its own window');
  clock.now += 41_000;
  t.equal((await guard.check(from('192.0.2.1'))).outcome, 'hold', 'a new window');
});

t.test('the address is never stored, and expired challenges and windows are purged', async (t) => {
  const { guard, clock, handle } = setup(t, { rateWindowMs: 60_000 });
  const proof = await solve(await guard.challenge(SITE, 'comment'));
  clock.now += 20_000;
  await guard.check(ordinary(proof, { clientAddress: '203.0.113.77' }));
  const dump = JSON.stringify(handle.db.all(sql`select * from spam_guard_windows`)) + JSON.stringify(handle.db.all(sql`select * from spam_guard_challenges`));
  t.notMatch(dump, '203.0.113.77');
  t.equal(await guard.purge(), 0, 'nothing has expired yet');
  clock.now += 2 * 3_600_000;
  t.equal(await guard.purge(), 2, 'the used challenge and the window');
});
