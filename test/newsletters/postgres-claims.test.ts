import t from 'tap';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { newsletterSendOf } from '../helpers/newsletters.js';
import { postgresTests, startPostgres } from '../helpers/postgres.js';

// Two instances on one PostgreSQL database claim a send's recipients at the same time: each
// recipient goes to exactly one of them (one UPDATE over a FOR UPDATE SKIP LOCKED subquery),
// and a dead instance's claims pass to the other only once they have run out.

postgresTests(() => {
  t.test('two instances claiming at once never take the same recipient', async (t) => {
    const url = await startPostgres(t);
    const a = await buildTestApp(t, { DATABASE_URL: url });
    const b = await buildTestApp(t, { DATABASE_URL: url });
    const postId = await newsletterSendOf(a, 400, 'Shared');
    const taken = { a: [] as string[], b: [] as string[] };
    const settled: boolean[] = [];
    const drain = async (ctx: TestApp, owner: 'a' | 'b') => {
      for (;;) {
        const batch = await ctx.app.newsletters.claim(postId, owner, 7, 60_000, false);
        if (batch.length === 0) return;
        for (const recipient of batch) {
          taken[owner].push(recipient.email);
          settled.push(await ctx.app.newsletters.settle(recipient, owner, { status: 'sent' }));
        }
      }
    };
    await Promise.all([drain(a, 'a'), drain(a, 'a'), drain(b, 'b'), drain(b, 'b')]);
    const all = [...taken.a, ...taken.b];
    t.equal(all.length, 400, 'every recipient claimed');
    t.ok(settled.every(Boolean), 'each settled by its owner');
    t.equal(new Set(all).size, 400, 'none twice');
    t.ok(taken.a.length > 0 && taken.b.length > 0, `both instances took some (${taken.a.length} and ${taken.b.length})`);
    t.match(await b.app.newsletters.progress(b.site.id, postId), { recipients: 400, sent: 400 });
  });

  t.test("a dead instance's claims pass on once they run out, and its late answers are refused", async (t) => {
    const url = await startPostgres(t);
    const a = await buildTestApp(t, { DATABASE_URL: url });
    const b = await buildTestApp(t, { DATABASE_URL: url });
    const postId = await newsletterSendOf(a, 5, 'Shared');
    const held = await a.app.newsletters.claim(postId, 'dead', 5, 300, false);
    t.equal(held.length, 5);
    t.same(await b.app.newsletters.claim(postId, 'alive', 5, 60_000, false), [], 'held claims are not taken');
    await new Promise((resolve) => setTimeout(resolve, 400));
    const retaken = await b.app.newsletters.claim(postId, 'alive', 5, 60_000, false);
    t.equal(retaken.length, 5, 'taken once the claims ran out');
    t.equal(await a.app.newsletters.settle(held[0]!, 'dead', { status: 'sent' }), false, 'the old owner can no longer settle');
    t.equal(await b.app.newsletters.settle(retaken[0]!, 'alive', { status: 'sent' }), true);
  });
});
