import t from 'tap';
import { buildTestApp } from '../helpers/app.js';
import { postgresTests, startPostgres } from '../helpers/postgres.js';

// PostgreSQL out of disk (its server's, error 53100 disk_full) or taking no writes (25006, a
// read-only standby): a post write answers 507 in the envelope as on SQLite, and a public page
// viewed for the first time is still served (keeping its rendered HTML is skipped). The errors
// are PostgreSQL's own, raised by a trigger, through the real driver and Drizzle.

postgresTests(() => {
  t.test('out of disk: writes answer 507 INSUFFICIENT_STORAGE, a first view is served without keeping its HTML', async (t) => {
    const ctx = await buildTestApp(t, { DATABASE_URL: await startPostgres(t) });
    const created = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Kept or not', content: 'Some **bold** text.', isDraft: false } });
    t.equal(created.statusCode, 201);
    const { slug } = created.json().data.post;
    const handle = (await ctx.call({ method: 'GET', url: '/api/v1/site' })).json().data.site.handle;

    const refuse = async (errcode: string) => {
      await ctx.rows(`create or replace function test_refuse() returns trigger language plpgsql as $$ begin raise exception 'refused for the test' using errcode = '${errcode}'; end $$`);
      await ctx.rows('drop trigger if exists test_refuse_update on posts');
      await ctx.rows('drop trigger if exists test_refuse_insert on posts');
      await ctx.rows('create trigger test_refuse_update before update on posts for each row execute function test_refuse()');
      await ctx.rows('create trigger test_refuse_insert before insert on posts for each row execute function test_refuse()');
    };

    await refuse('disk_full');
    const page = await ctx.call({ method: 'GET', url: `/sites/${handle}/${slug}/`, key: null });
    t.equal(page.statusCode, 200, 'the page is served');
    t.match(page.body, '<strong>bold</strong>');
    t.same(await ctx.rows('select html from posts where slug = ?', slug), [{ html: null }], 'its HTML was not kept');

    const write = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Not saved', content: 'x' } });
    t.equal(write.statusCode, 507);
    t.equal(write.json().error.code, 'INSUFFICIENT_STORAGE');

    await refuse('read_only_sql_transaction');
    const again = await ctx.call({ method: 'GET', url: `/sites/${handle}/${slug}/`, key: null });
    t.equal(again.statusCode, 200, 'served by a database that takes no writes');

    await ctx.rows('drop trigger test_refuse_update on posts');
    await ctx.rows('drop trigger test_refuse_insert on posts');
    const id = created.json().data.post.id;
    t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, payload: { content: 'Some **bold** text, edited.' } })).statusCode, 200);
    t.equal((await ctx.call({ method: 'GET', url: `/sites/${handle}/${slug}/`, key: null })).statusCode, 200);
    t.match(await ctx.rows('select html from posts where slug = ?', slug), [{ html: /<strong>bold<\/strong>/ }], 'kept once writes work again');
    t.equal((await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Saved now', content: 'x' } })).statusCode, 201);
  });
});
