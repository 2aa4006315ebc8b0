/**
 * Several instances of the real server (child processes) on one PostgreSQL and one
 * S3-compatible store behave as one service: shared state, concurrent writes, start-up on an
 * empty database, and a database that goes away and comes back.
 */
import t from 'tap';
import { waitFor, type Service } from '../helpers/app.js';
import { call, startInstances } from '../helpers/instances.js';
import { multipart } from '../helpers/multipart.js';
import { canControlPostgres, ownPostgres, postgresTests, restartPostgres, startPostgres, stopPostgres } from '../helpers/postgres.js';
import { startS3 } from '../helpers/s3.js';

// Real server processes, started several times: more than the default file timeout on a busy machine.
t.setTimeout(600_000);

// Stops and restarts its server: a cluster of its own, not the suite's shared one.
ownPostgres();
postgresTests(() => {
  t.test('two instances started at once on an empty database migrate once and share one service', async (t) => {
    const url = await startPostgres(t);
    const s3 = await startS3(t);
    const [a, b] = await startInstances(t, 2, { DATABASE_URL: url, ...s3.env });

    const ready = await call(a, 'GET', '/ready');
    t.equal(ready.status, 200);
    t.same(ready.body.databaseLocation, { kind: 'postgres', url: url.replace(/:[^:@/]*@/, ':***@') }, '/ready names the database, password hidden');
    t.equal(ready.body.store.kind, 's3');
    t.notMatch(a.output() + b.output(), /Created site/, 'the bootstrap key is given: no key is printed');

    // A post created on one is read, published and deleted on the other.
    const created = await call(a, 'POST', '/api/v1/posts', { body: { title: 'Shared post', content: 'Written on A.', tags: ['Shared'] } });
    t.equal(created.status, 201);
    const id = created.body.data.post.id;
    const onB = await call(b, 'GET', `/api/v1/posts/${id}`);
    t.equal(onB.status, 200);
    t.equal(onB.text, (await call(a, 'GET', `/api/v1/posts/${id}`)).text, 'byte-identical answers from both instances');

    const site = (await call(a, 'GET', '/api/v1/site')).body.data.site;
    const page = (service: Service) => call(service, 'GET', `/sites/${site.handle}/shared-post/`, { key: null });
    t.equal((await page(b)).status, 404, 'a draft is not public');
    t.equal((await call(b, 'PUT', `/api/v1/posts/${id}`)).status, 200, 'published on B');
    t.equal((await page(a)).status, 200, 'public on A at once');
    const feed = await call(a, 'GET', `/sites/${site.handle}/rss.xml`, { key: null });
    t.match(feed.text, 'Shared post', "in A's feed at once");
    t.equal((await call(a, 'PUT', `/api/v1/posts/${id}`)).status, 200, 'unpublished on A');
    t.equal((await page(b)).status, 404, 'gone from B at once');
    t.notMatch((await call(b, 'GET', `/sites/${site.handle}/rss.xml`, { key: null })).text, 'Shared post');

    // An idempotency key used on one is replayed by the other.
    const headers = { 'idempotency-key': 'shared-key-1' };
    const first = await call(a, 'POST', '/api/v1/posts', { body: { title: 'Once only' }, headers });
    const again = await call(b, 'POST', '/api/v1/posts', { body: { title: 'Once only' }, headers });
    t.equal(again.status, first.status);
    t.equal(again.headers.get('idempotent-replayed'), 'true');
    t.equal(again.text, first.text);

    // A knowledge file uploaded through one is stored once, indexed, and seen by both.
    const upload = multipart([{ name: 'file', filename: 'notes.md', contentType: 'text/markdown', content: Buffer.from('# Beekeeping\n\nHives need water in summer.\n') }]);
    const file = await call(b, 'POST', '/api/v1/knowledge', { raw: upload.payload, headers: upload.headers });
    t.equal(file.status, 201);
    await waitFor(async () => (await call(a, 'GET', `/api/v1/knowledge/${file.body.data.knowledge.id}`)).body.data.knowledge.status === 'indexed', 'the file to be indexed');
    t.equal((await s3.keys()).length, 1, 'one object in the shared store');

    // Each instance keeps list pages under the site's shared content version: a write on one shows in the other's lists at once.
    const listed = async (service: Service) => (await call(service, 'GET', '/api/v1/posts?status=all&limit=5')).body.data.posts.map((post: { title: string }) => post.title);
    t.ok((await listed(a)).includes('Shared post'), 'listed on A (the page now kept)');
    t.ok((await listed(a)).includes('Shared post'), 'listed on A again');
    t.equal((await call(b, 'PATCH', `/api/v1/posts/${id}`, { body: { title: 'Shared post, renamed on B' } })).status, 200);
    t.ok((await listed(a)).includes('Shared post, renamed on B'), "B's edit in A's list at once");

    t.equal((await call(b, 'DELETE', `/api/v1/posts/${id}`)).status, 200, 'deleted on B');
    t.equal((await call(a, 'GET', `/api/v1/posts/${id}`)).status, 404, 'gone on A');
    t.notOk((await listed(a)).some((title: string) => title.startsWith('Shared post')), "gone from A's list at once");
  });

  t.test('200 concurrent creates with one title across two instances: 200 distinct slugs', async (t) => {
    const url = await startPostgres(t);
    const [a, b] = await startInstances(t, 2, { DATABASE_URL: url });
    // A 503 with Retry-After is the service's answer to a pool that stays busy past its wait (a
    // loaded CI machine): a client tries again, as this one does, and the slugs must still be distinct.
    const create = async (i: number) => {
      for (let attempt = 1; ; attempt++) {
        const answer = await call(i % 2 ? a : b, 'POST', '/api/v1/posts', { body: { title: 'Same Title', content: `Post ${i}` } });
        if (answer.status !== 503 || attempt === 5) return answer;
        await new Promise((resolve) => setTimeout(resolve, 1000 * Number(answer.headers.get('retry-after') ?? 1)));
      }
    };
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => create(i)));
    t.same(
      answers.map((answer) => answer.status).filter((status) => status !== 201),
      [],
      'every create succeeded',
    );
    const slugs = new Set(answers.map((answer) => answer.body.data.post.slug));
    t.equal(slugs.size, 200, '200 distinct slugs');
    t.ok(slugs.has('same-title') && slugs.has('same-title-200'), 'same-title, then same-title-2 ... same-title-200');
    const list = await call(a, 'GET', '/api/v1/posts?limit=1');
    t.equal(list.body.data.pagination.total, 200, 'the counts kept in the writes agree');
  });

  t.test('PostgreSQL stopped: 503 with the envelope, /ready says why, the process stays up and serves again', { skip: !canControlPostgres() && 'TEST_DATABASE_URL is not stopped by tests' }, async (t) => {
    const url = await startPostgres(t);
    const [service] = await startInstances(t, 1, { DATABASE_URL: url });
    const created = await call(service, 'POST', '/api/v1/posts', { body: { title: 'Before the outage' } });
    t.equal(created.status, 201);

    await stopPostgres();
    try {
      const refused = await call(service, 'POST', '/api/v1/posts', { body: { title: 'During the outage' } });
      t.equal(refused.status, 503);
      t.equal(refused.body.success, false);
      t.equal(refused.body.error.code, 'DATABASE_UNAVAILABLE');
      t.equal(refused.headers.get('retry-after'), '1');
      const read = await call(service, 'GET', `/api/v1/posts/${created.body.data.post.id}`);
      t.equal(read.status, 503, 'reads too (the key is cached; the post is not)');
      const ready = await call(service, 'GET', '/ready', { key: null });
      t.equal(ready.status, 503);
      t.equal(ready.body.database, 'unavailable');
      t.equal((await call(service, 'GET', '/health', { key: null })).status, 200, 'alive');
      t.equal(service.child.exitCode, null, 'the process stays up');
    } finally {
      await restartPostgres();
    }
    await waitFor(async () => (await call(service, 'GET', '/ready', { key: null })).status === 200, 'ready again', 60_000);
    const after = await call(service, 'POST', '/api/v1/posts', { body: { title: 'After the outage' } });
    t.equal(after.status, 201, 'serves again');
    const list = await call(service, 'GET', '/api/v1/posts');
    t.same(
      list.body.data.posts.map((post: { title: string }) => post.title),
      ['After the outage', 'Before the outage'],
      'nothing half-written during the outage',
    );
  });
});
