import t from 'tap';
import { buildTestApp } from '../helpers/app.js';
import { newsletterSendOf } from '../helpers/newsletters.js';

// What a claim of a send's recipients takes (on SQLite, and on PostgreSQL through
// test/on-postgres/newsletters/claims.test.ts; test/newsletters/postgres-claims.test.ts has two
// instances on one PostgreSQL database): the due ones, earliest first, never one whose retry
// is not yet due; a claim that ran out; and, for a restarted sole worker, every other owner's
// claim at once.

t.test('a claim takes the due recipients, earliest first, and none whose retry is not yet due', async (t) => {
  const ctx = await buildTestApp(t);
  const postId = await newsletterSendOf(ctx, 6, 'Claimed');
  const { newsletters } = ctx.app;
  const [early, later] = await newsletters.claim(postId, 'a', 2, 60_000, false);
  t.ok(early && later, 'two claimed');
  // One is due again a minute ago, the other in an hour.
  await newsletters.settle(early!, 'a', { status: 'retry', error: '451', at: Date.now() - 60_000 });
  await newsletters.settle(later!, 'a', { status: 'retry', error: '451', at: Date.now() + 3_600_000 });
  const first = await newsletters.claim(postId, 'b', 1, 60_000, false);
  t.same(first.map((row) => row.email), [early!.email], 'the retry due longest ago comes first');
  t.equal(first[0]!.attempts, 2, 'its second attempt');
  const rest = await newsletters.claim(postId, 'b', 10, 60_000, false);
  t.equal(rest.length, 4, 'the four never tried');
  t.notOk(rest.some((row) => row.email === later!.email), 'not the one due in an hour');
  t.same(await newsletters.claim(postId, 'c', 10, 60_000, false), [], 'nothing else is due');
});

t.test("a claim that ran out is taken again; a restarted sole worker takes every other owner's at once", async (t) => {
  const ctx = await buildTestApp(t);
  const postId = await newsletterSendOf(ctx, 4, 'Claimed');
  const { newsletters } = ctx.app;
  const dead = await newsletters.claim(postId, 'dead', 2, 300, false);
  t.equal(dead.length, 2, 'two held by a claim that runs out soon');
  const live = await newsletters.claim(postId, 'live', 2, 60_000, false);
  t.equal(live.length, 2, 'the other two, held for a minute');
  t.notOk(live.some((row) => dead.some((held) => held.email === row.email)), 'a live claim is not taken');
  await new Promise((resolve) => setTimeout(resolve, 400));
  const retaken = await newsletters.claim(postId, 'next', 10, 60_000, false);
  t.same(retaken.map((row) => row.email).sort(), dead.map((row) => row.email).sort(), 'only the claims that ran out');
  const all = await newsletters.claim(postId, 'restarted', 10, 60_000, true);
  t.equal(all.length, 4, 'taking all: every claim of another owner, running out or not');
  t.same(await newsletters.claim(postId, 'restarted', 10, 60_000, true), [], 'its own claims are not taken again');
});
