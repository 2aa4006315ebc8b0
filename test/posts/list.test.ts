import t from 'tap';
import type { RawJson } from '../../src/json.js';
import type { PostJsonCache } from '../../src/posts/json-cache.js';
import { ANCHOR_STRIDE, ListAnchors, type CreationTimes } from '../../src/posts/list-anchors.js';
import { inStatusList, type ListQuery } from '../../src/posts/rules.js';
import { postResource, type PostsJsonPage } from '../../src/posts/view.js';
import { POST_LIST_STATUSES } from '../../src/limits.js';
import { buildTestApp, SQLITE_ONLY } from '../helpers/app.js';

/** A page kept, or produced and kept: as the posts store reads through the cache. */
const keptPage = (cache: PostJsonCache, siteId: string, version: number, query: ListQuery, produce: () => PostsJsonPage) =>
  cache.lookupPage(siteId, version, query) ?? cache.keepPage(siteId, version, query, produce());
/** A post kept, or produced and kept (a post not found throws, and nothing is kept). */
const keptPost = (cache: PostJsonCache, siteId: string, version: number, postId: string, produce: () => RawJson) =>
  cache.lookupPost(siteId, version, postId) ?? cache.keepPost(siteId, version, postId, produce());
/** The same for an answer that comes later (PostgreSQL): kept once it comes. */
const keptPageLater = async (cache: PostJsonCache, siteId: string, version: number, query: ListQuery, produce: () => Promise<PostsJsonPage>) =>
  cache.lookupPage(siteId, version, query) ?? cache.keepPage(siteId, version, query, await produce());
const keptPostLater = async (cache: PostJsonCache, siteId: string, version: number, postId: string, produce: () => Promise<RawJson>) =>
  cache.lookupPost(siteId, version, postId) ?? cache.keepPost(siteId, version, postId, await produce());

/** The answer of steps that ask the database nothing (the anchors' reads, answered here). */
function done<T>(steps: Generator<unknown, T, unknown>): T {
  const step = steps.next();
  if (!step.done) throw new Error('the steps asked the database');
  return step.value;
}

/** A list of creation times, newest first, read as the database would (CreationTimes), counting the entries read. */
function listOf(times: number[]) {
  const reads = { calls: 0, entries: 0 };
  const creationTimes: CreationTimes = function* (from, skip, count) {
    const start = times.findIndex((time) => time <= from);
    const read = start < 0 ? [] : times.slice(start + skip, start + skip + count);
    reads.calls++;
    reads.entries += read.length;
    return read;
  };
  /** The entries of a page as the database would give them from `locate`'s answer (or the plain offset). */
  const page = (anchors: ListAnchors, version: number, offset: number, limit: number) => {
    const start = done(anchors.locate('site', undefined, version, offset, creationTimes));
    if (!start) return times.slice(offset, offset + limit);
    const first = times.findIndex((time) => time <= start.from);
    return times.slice(first + start.skip, first + start.skip + limit);
  };
  return { reads, creationTimes, page };
}

t.test('anchors: every page starts where the plain offset does, ties across anchors included', async (t) => {
  // 1,037 entries newest first; runs of equal times (posts created in one millisecond before
  // times were unique) straddle anchor offsets 100, 200 and 300, and one run holds 250 entries.
  const times: number[] = [];
  let time = 1_000_000;
  while (times.length < 1037) {
    const n = times.length;
    const run = n === 97 ? 6 : n === 195 ? 11 : n === 290 ? 250 : n === 700 ? 2 : 1;
    for (let i = 0; i < run; i++) times.push(time);
    time -= 1 + (n % 3);
  }
  times.length = 1037;
  for (const limit of [1, 7, 20, 100]) {
    const anchors = new ListAnchors();
    const list = listOf(times);
    for (let offset = 0; offset <= times.length + limit; offset += limit) {
      t.same(list.page(anchors, 1, offset, limit), times.slice(offset, offset + limit), `limit ${limit}, offset ${offset}`);
    }
  }
  // Pages asked for in any order agree too.
  const anchors = new ListAnchors();
  const list = listOf(times);
  for (const offset of [950, 10, 340, 101, 1036, 299, 2000, 99, 100, 0]) {
    t.same(list.page(anchors, 1, offset, 20), times.slice(offset, offset + 20), `offset ${offset} out of order`);
  }
});

t.test('anchors: found once per version, by reading on from the last one known', async (t) => {
  const times = Array.from({ length: 5000 }, (_, i) => 10_000 - i);
  const anchors = new ListAnchors();
  const list = listOf(times);
  t.equal(done(anchors.locate('site', undefined, 1, 99, list.creationTimes)), null, 'the first stride needs no anchor');
  t.equal(list.reads.calls, 0);
  t.equal(done(anchors.locate('site', undefined, 1, 2520, list.creationTimes)), null, 'the first deep page of a version: its plain offset');
  t.equal(list.reads.calls, 0, 'and nothing read for it');
  t.same(done(anchors.locate('site', undefined, 1, 2520, list.creationTimes)), { from: times[2500], skip: 20 }, 'the second: from its anchor');
  t.equal(list.reads.entries, 2501, 'creation times read down to the anchor asked for, once');
  done(anchors.locate('site', undefined, 1, 2000, list.creationTimes));
  done(anchors.locate('site', undefined, 1, 2599, list.creationTimes));
  t.equal(list.reads.calls, 1, 'shallower pages and pages of the same stride read nothing more');
  done(anchors.locate('site', undefined, 1, 3010, list.creationTimes));
  t.equal(list.reads.entries, 2501 + 501, 'a deeper page reads on from the last anchor (read again for its ties)');
  t.same(done(anchors.locate('site', undefined, 1, 9000, list.creationTimes)), { from: times[4900], skip: 4100 }, 'past the end: from the last anchor, an empty page');
  const afterEnd = list.reads.calls;
  done(anchors.locate('site', undefined, 1, 12000, list.creationTimes));
  t.equal(list.reads.calls, afterEnd, 'the end of the list is remembered');
  t.equal(done(anchors.locate('site', undefined, 2, 2520, list.creationTimes)), null, 'a version they were not moved to (another connection wrote): their first deep page by offset');
  t.equal(list.reads.calls, afterEnd);
  t.same(done(anchors.locate('site', undefined, 2, 2520, list.creationTimes)), { from: times[2500], skip: 20 });
  t.equal(list.reads.calls, afterEnd + 1, 'the second finds them again');
});

t.test('anchors move with the writes of this process: every page of every status list still starts where the plain offset does', async (t) => {
  type Post = { id: number; createdAt: Date; isDraft: boolean; visibility: 'public' | 'unlisted' };
  let seed = 7;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  // 1,200 posts newest first, two milliseconds apart, in every state; one run of ties.
  let posts: Post[] = Array.from({ length: 1200 }, (_, i) => ({ id: i, createdAt: new Date(100_000 - 2 * i), isDraft: i % 3 === 0, visibility: i % 5 === 0 ? 'unlisted' : 'public' }));
  for (let i = 690; i < 716; i++) posts[i]!.createdAt = new Date(100_000 - 2 * 690);
  let nextId = posts.length;
  // Scheduled posts are a filter, not a list by status: no anchors (isByStatus).
  const statuses = [undefined, ...POST_LIST_STATUSES.filter((status) => status !== 'scheduled')];
  const listed = (status: (typeof statuses)[number]) => posts.filter((post) => inStatusList(status, post));
  const timesOf = (status: (typeof statuses)[number]): CreationTimes =>
    function* (from, skip, count) {
    const times = listed(status).map((post) => post.createdAt.getTime());
    const start = times.findIndex((time) => time <= from);
    return start < 0 ? [] : times.slice(start + skip, start + skip + count);
  };
  const anchors = new ListAnchors();
  let version = 1;
  const checkPages = (when: string) => {
    for (const status of statuses) {
      const ids = listed(status).map((post) => post.id);
      const times = listed(status).map((post) => post.createdAt.getTime());
      for (const offset of [0, 99, 100, 150, 333, 480, 640, 655, 700, 705, ids.length - 5, ids.length + 10]) {
        // Twice: the first deep read of a list is by its plain offset.
        done(anchors.locate('site', status, version, offset, timesOf(status)));
        const start = done(anchors.locate('site', status, version, offset, timesOf(status)));
        const first = start ? times.findIndex((time) => time <= start.from) + start.skip : offset;
        const page = ids.slice(first, first + 20);
        if (JSON.stringify(page) !== JSON.stringify(ids.slice(offset, offset + 20))) return t.fail(`${when}: status ${status}, offset ${offset}`);
      }
    }
    t.pass(when);
  };
  const write = (before: Post | null, after: Post | null) => {
    posts = posts.filter((post) => post.id !== (before ?? after)!.id);
    if (after) posts = [...posts, after].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || a.id - b.id);
    version++;
    anchors.moved({ siteId: 'site', before: before as never, after: after as never, at: new Date() }, version);
  };
  checkPages('found');
  const sizeBefore = anchors.size;
  // Posts tied with an anchor (the 'all' list's at offset 700 is inside the run) leave and come back.
  const tied = posts.find((post) => post.id === 695)!;
  write(tied, null);
  checkPages('a post tied with an anchor, before it, deleted');
  write(null, tied);
  checkPages('and back');
  const tiedDraft = posts.find((post) => post.id === 693)!;
  write(tiedDraft, { ...tiedDraft, isDraft: !tiedDraft.isDraft });
  checkPages('a post tied with an anchor toggled');
  for (let round = 0; round < 300; round++) {
    const pick = posts[Math.floor(random() * posts.length)]!;
    const kind = round % 4;
    if (kind === 0) write(null, { id: nextId++, createdAt: new Date(posts[0]!.createdAt.getTime() + 1), isDraft: random() < 0.5, visibility: 'public' });
    else if (kind === 1) write(pick, null);
    else if (kind === 2) write(pick, { ...pick, isDraft: !pick.isDraft });
    else write(pick, { ...pick, visibility: pick.visibility === 'public' ? 'unlisted' : 'public' });
    if (round % 25 === 0) checkPages(`after ${round + 1} writes`);
  }
  checkPages('after 300 writes');
  t.equal(sizeBefore, statuses.length, 'a list of each status was remembered');

  // The version must be the one they were moved from: a write they missed (another connection's, or one rolled back) drops them.
  const reads = { n: 0 };
  const counted: CreationTimes = (from, skip, count) => (reads.n++, timesOf('all')(from, skip, count));
  done(anchors.locate('site', 'all', version, 500, counted));
  done(anchors.locate('site', 'all', version, 500, counted));
  const found = reads.n;
  write(null, { id: nextId++, createdAt: new Date(posts[0]!.createdAt.getTime() + 1), isDraft: false, visibility: 'public' });
  done(anchors.locate('site', 'all', version, 500, counted));
  t.equal(reads.n, found, 'moved with a write: nothing read again');
  version += 2;
  anchors.moved({ siteId: 'site', before: null, after: posts[0] as never, at: new Date() }, version);
  t.equal(done(anchors.locate('site', 'all', version, 500, counted)), null, 'a version skipped: found again, from the first deep read on');
  // A write that could not tell where the version went (no such site) drops them too.
  done(anchors.locate('site', 'all', version, 500, counted));
  done(anchors.locate('other site', 'all', 1, 500, counted));
  anchors.moved({ siteId: 'site', before: null, after: posts[0] as never, at: new Date() }, null);
  t.equal(done(anchors.locate('site', 'all', version + 1, 500, counted)), null);
  t.equal(anchors.size, 2, "another site's list is left alone; this site's were dropped and one found again");

  // New posts come first and push the anchors down: past two strides before the first, they are found again.
  done(anchors.locate('site', 'all', version, 500, counted));
  done(anchors.locate('site', 'all', version, 500, counted));
  for (let i = 0; i < 2 * ANCHOR_STRIDE; i++) write(null, { id: nextId++, createdAt: new Date(posts[0]!.createdAt.getTime() + 1), isDraft: false, visibility: 'public' });
  t.equal(done(anchors.locate('site', 'all', version, 500, counted)), null, 'found again, from the first deep read on');
  checkPages('after 200 new posts');
});

t.test('anchors: the lists remembered are bounded, the least recently used forgotten first', async (t) => {
  const anchors = new ListAnchors(3);
  const list = listOf(Array.from({ length: 500 }, (_, i) => 1000 - i));
  // Twice each: the first deep page of a version is read by its plain offset.
  for (const key of ['a', 'b', 'c']) for (let i = 0; i < 2; i++) done(anchors.locate(key, undefined, 1, 150, list.creationTimes));
  done(anchors.locate('a', undefined, 1, 150, list.creationTimes));
  done(anchors.locate('d', undefined, 1, 150, list.creationTimes));
  t.equal(anchors.size, 3);
  const calls = list.reads.calls;
  done(anchors.locate('a', undefined, 1, 150, list.creationTimes));
  done(anchors.locate('c', undefined, 1, 150, list.creationTimes));
  t.equal(list.reads.calls, calls, 'a and c kept');
  t.equal(done(anchors.locate('b', undefined, 1, 150, list.creationTimes)), null, 'b, the least recently used, was forgotten');
  done(anchors.locate('b', undefined, 1, 150, list.creationTimes));
  t.equal(list.reads.calls, calls + 1, 'and its anchors found again');
  t.equal(ANCHOR_STRIDE, 100);
});

t.test('through the API, every page of every status equals the page a plain offset gives, before and after writes', { skip: SQLITE_ONLY }, async (t) => {
  const ctx = await buildTestApp(t);
  const { listPageQuery } = await import('../../src/posts/sqlite.js');
  const start = Date.now() - 10_000_000;
  for (let i = 0; i < 460; i++) {
    const input = { title: `Post ${i}`, isDraft: i % 3 === 0, visibility: i % 7 === 0 ? ('unlisted' as const) : ('public' as const) };
    await ctx.app.posts.create(ctx.site.id, input, {}, new Date(start + i * 10));
  }
  // Runs of posts created in one millisecond (before creation times were unique), across anchors.
  const ids = ctx.sqlite.prepare('select id from posts where site_id = ? order by created_at desc').pluck().all(ctx.site.id) as string[];
  const tie = ctx.sqlite.prepare('update posts set created_at = ? where id = ?');
  for (const [from, to] of [[95, 105], [190, 230], [298, 302]]) for (let i = from; i < to; i++) tie.run(start + 100_000 - from, ids[i]);
  ctx.sqlite.prepare('update sites set content_version = content_version + 1 where id = ?').run(ctx.site.id);

  const checkEveryPage = async (when: string) => {
    for (const status of [undefined, ...POST_LIST_STATUSES]) {
      for (const limit of [20, 100]) {
        const seen: string[] = [];
        for (let page = 1; ; page++) {
          const res = await ctx.call({ method: 'GET', url: `/api/v1/posts?page=${page}&limit=${limit}${status ? `&status=${status}` : ''}` });
          const { posts, pagination } = res.json().data;
          const expected = listPageQuery(ctx.app.database.db, ctx.site.id, { page, limit, status }, (page - 1) * limit)
            .all()
            .map((row) => (JSON.parse(row.json) as { id: string }).id);
          const got = posts.map((post: { id: string }) => post.id);
          if (JSON.stringify(got) !== JSON.stringify(expected)) {
            t.same(got, expected, `${when}: status ${status}, limit ${limit}, page ${page}`);
            return;
          }
          seen.push(...got);
          if (page >= pagination.pages) {
            t.equal(new Set(seen).size, pagination.total, `${when}: status ${status}, limit ${limit}: every post once in ${page} pages`);
            break;
          }
        }
      }
    }
  };
  await checkEveryPage('first reads');
  const created = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Newest', isDraft: false } });
  await ctx.call({ method: 'DELETE', url: `/api/v1/posts/${ids[250]}` });
  await ctx.call({ method: 'PUT', url: `/api/v1/posts/${ids[120]}` });
  await checkEveryPage('after a create, a delete and a toggle');
  const res = await ctx.call({ method: 'GET', url: '/api/v1/posts?page=1&limit=1' });
  t.equal(res.json().data.posts[0].id, created.json().data.post.id);
});

t.test('anchors are found, and a deep page read from one, in the list index alone, with no sort', { skip: SQLITE_ONLY }, async (t) => {
  const ctx = await buildTestApp(t);
  const { anchoredPageQuery, creationTimesQuery } = await import('../../src/posts/sqlite.js');
  const planOf = ({ sql, params }: { sql: string; params: unknown[] }) =>
    ctx.sqlite
      .prepare(`explain query plan ${sql}`)
      .all(...params)
      .map((row) => (row as { detail: string }).detail);
  // Lists by status alone (scheduled posts are a filter: see isByStatus).
  for (const status of [undefined, ...POST_LIST_STATUSES.filter((status) => status !== 'scheduled')]) {
    const page = planOf(anchoredPageQuery(ctx.app.database.db, ctx.site.id, status, Date.now(), 30, 20).toSQL());
    t.ok(page.some((line) => /SEARCH posts USING COVERING INDEX posts_site_list_idx \(site_id=\? AND created_at<\?\)/.test(line)), `status ${status}: the page from its anchor in the list index`);
    t.equal(page.filter((line) => line.includes('TEMP B-TREE')).length, 0, `status ${status}: the page sorts nothing`);
    const times = planOf(creationTimesQuery(ctx.app.database.db, ctx.site.id, status, Date.now(), 1001, 0).toSQL());
    t.same(times, ['SEARCH posts USING COVERING INDEX posts_site_list_idx (site_id=? AND created_at<?)'], `status ${status}: creation times from the list index alone`);
  }
});

t.test('the JSON the database builds for a post is postResource, for every kind of text and state', async (t) => {
  const ctx = await buildTestApp(t);
  const texts = [
    'plain',
    'quotes " and \\ backslashes',
    'controls \u0001\u0008\t\n\r\f\u001f and DEL \u007f',
    'line separators \u2028\u2029',
    'accents Café, CJK 日本語, emoji 😀👩‍👩‍👧, RTL שלום',
    '</script><!-- -->',
    ' '.repeat(3) + 'x',
  ];
  const ids: string[] = [];
  for (const [i, text] of texts.entries()) {
    const body = { title: `T ${text}`.slice(0, 300), description: text, content: `# ${text}\n\n${text.repeat(50)}`, category: text, tags: [text, `t${i}`], authorId: text, isDraft: i % 2 === 0 };
    ids.push((await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: body })).json().data.post.id);
  }
  ids.push((await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Only a title' } })).json().data.post.id);
  const unlisted = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Unlisted', isDraft: false } })).json().data.post.id;
  // Create takes no visibility (an unknown field is refused): unlisted is set by PATCH.
  t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${unlisted}`, payload: { visibility: 'unlisted' } })).statusCode, 200);
  ids.push(unlisted);
  await ctx.call({ method: 'PUT', url: `/api/v1/posts/${ids[0]}` });

  const listed = new Map<string, unknown>();
  const list = await ctx.call({ method: 'GET', url: '/api/v1/posts?status=all&limit=100' });
  t.equal(list.headers['content-type'], 'application/json; charset=utf-8');
  for (const post of list.json().data.posts) listed.set(post.id, post);
  for (const id of ids) {
    const expected = JSON.parse(JSON.stringify(postResource(await ctx.app.posts.get(ctx.site.id, id))));
    const res = await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}` });
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    t.same(res.json().data.post, expected, `GET ${expected.title}`);
    t.strictSame(Object.keys(res.json().data.post), Object.keys(expected), 'members in the same order');
    t.same(listed.get(id), expected, `listed ${expected.title}`);
  }
  const one = await ctx.call({ method: 'GET', url: `/api/v1/posts/${ids[1]}` });
  t.strictSame(Object.keys(one.json()), ['success', 'data']);
  t.strictSame(Object.keys(one.json().data), ['message', 'post', 'site']);
  t.same(one.json().data.site, { id: ctx.site.id, name: ctx.site.name });
  t.strictSame(Object.keys(list.json().data), ['posts', 'pagination', 'site']);
});

t.test('stringifyWithRaw is JSON.stringify with RawJson text put in as it is', async (t) => {
  const { RawJson, stringifyWithRaw } = await import('../../src/json.js');
  const values: unknown[] = [
    { a: 1, b: 'two', c: [1, undefined, 'x', null], d: undefined, e: () => 1, f: new Date(0), g: { toJSON: () => 'custom' }, h: { nested: [true, { z: -0.5 }] } },
    [],
    {},
    'text "quoted" \n',
    null,
    42,
  ];
  for (const value of values) t.equal(stringifyWithRaw(value), JSON.stringify(value));
  t.equal(stringifyWithRaw({ success: true, data: { posts: new RawJson('[{"id":"x"}]'), n: [new RawJson('1'), 2] } }), '{"success":true,"data":{"posts":[{"id":"x"}],"n":[1,2]}}');
});

t.test('post JSON cache: pages and posts kept per site, version and query; the least recently used dropped past its size; older versions dropped', async (t) => {
  const { PostJsonCache } = await import('../../src/posts/json-cache.js');
  const { RawJson } = await import('../../src/json.js');
  const pageOf = (chars: number, tag = 'x') => ({ posts: new RawJson(`["${tag.repeat(Math.max(0, chars - 4))}"]`), pagination: { page: 1, limit: 20, total: 1, pages: 1 } });
  const query = { page: 1, limit: 20 };
  const cache = new PostJsonCache(400);
  let produced = 0;
  const produce = (chars = 50, tag?: string) => () => {
    produced++;
    return pageOf(chars, tag);
  };

  const kept = keptPage(cache, 's1', 1, query, produce());
  t.equal(keptPage(cache, 's1', 1, query, produce()), kept, 'read again: the page kept');
  t.equal(produced, 1);
  keptPage(cache, 's2', 1, query, produce());
  for (const other of [{ ...query, page: 2 }, { ...query, limit: 21 }, { ...query, status: 'draft' as const }, { ...query, tag: 'a' }, { ...query, category: 'a' }, { ...query, q: 'a' }]) {
    keptPage(cache, 's1', 1, other, produce());
  }
  t.equal(produced, 8, 'another site, page, limit, status or filter is another page');
  t.equal(cache.size, 8);
  t.equal(cache.keptChars, 400);

  // 400 characters hold 8 pages of 50: the ninth dropped the least recently used (the first).
  keptPage(cache, 's3', 1, query, produce());
  t.equal(cache.size, 8);
  t.equal(produced, 9);
  const second = keptPage(cache, 's2', 1, query, produce());
  t.equal(produced, 9, 'the next least recently used is still kept, and now the most recent');
  keptPage(cache, 's4', 1, query, produce());
  t.equal(keptPage(cache, 's2', 1, query, produce()), second, 'the page read most recently stays');
  t.not(keptPage(cache, 's1', 1, query, produce()), kept, 'the least recently used was dropped');

  // A site that moved on: everything kept under its older version goes at once.
  t.equal(cache.size, 8);
  const newer = keptPage(cache, 's1', 2, query, produce());
  t.equal(cache.size, 4, "s1's pages of version 1 dropped, the other sites' kept");
  t.equal(cache.keptChars, 200);
  t.equal(keptPage(cache, 's2', 1, query, produce()), second);
  const stale = keptPage(cache, 's1', 1, query, produce());
  t.not(keptPage(cache, 's1', 1, query, produce()), stale, 'read under a version the site moved past: not kept');
  t.equal(keptPage(cache, 's1', 2, query, produce()), newer);

  const large = pageOf(101);
  t.equal(keptPage(cache, 'big', 1, query, () => large), large);
  t.not(keptPage(cache, 'big', 1, query, () => pageOf(101)), large, 'a page over a quarter of the whole is not kept');

  // Answers that come later (PostgreSQL): kept once they come, once when two reads missed together.
  const later = new PostJsonCache(400);
  const [a, b] = await Promise.all([keptPageLater(later, 's', 1, query, async () => pageOf(100, 'a')), keptPageLater(later, 's', 1, query, async () => pageOf(100, 'b'))]);
  t.not(a, b);
  t.equal(later.size, 1);
  t.equal(await keptPageLater(later, 's', 1, query, async () => pageOf(100, 'c')), b, 'the later answer kept');
  for (const site of ['t', 'u', 'v']) await keptPageLater(later, site, 1, query, async () => pageOf(100));
  t.equal(later.size, 4, 'the twin counted once: four pages of 100 fit in 400');
  // A read of version 1 answered after one of version 2 was kept: not kept over it.
  let answerOld!: (page: ReturnType<typeof pageOf>) => void;
  const old = keptPageLater(later, 'w', 1, query, () => new Promise<ReturnType<typeof pageOf>>((resolve) => (answerOld = resolve)));
  const current = await keptPageLater(later, 'w', 2, query, async () => pageOf(10));
  answerOld(pageOf(10));
  await old;
  t.equal(await keptPageLater(later, 'w', 2, query, async () => pageOf(10)), current);
  t.equal(later.keptChars, 310, 'the late answer of version 1 was not kept');

  // Single posts share the budget; a post and a page never answer for each other.
  const posts = new PostJsonCache(400);
  const postOf = (chars: number) => new RawJson(`"${'p'.repeat(chars - 2)}"`);
  const one = keptPost(posts, 's', 1, 'p1', () => postOf(100));
  t.equal(keptPost(posts, 's', 1, 'p1', () => postOf(100)), one, 'a post read again: the one kept');
  t.not(keptPost(posts, 't', 1, 'p1', () => postOf(100)), one, 'another site is read anew');
  const page = keptPage(posts, 's', 1, query, () => pageOf(100));
  keptPost(posts, 's', 1, 'p2', () => postOf(100));
  t.equal(posts.size, 4);
  t.equal(keptPage(posts, 's', 1, query, () => pageOf(100)), page);
  keptPost(posts, 'u', 1, 'p3', () => postOf(100));
  t.equal(posts.size, 4, 'posts and pages counted together: the oldest went');
  t.not(keptPost(posts, 's', 1, 'p1', () => postOf(100)), one);
  t.not(keptPost(posts, 's', 2, 'p1', () => postOf(100)), one, 'another version, not known to have left it unchanged, is read anew');
  t.equal(posts.size, 3, "the site's page of version 1 went; its other post stays until read (see the next test), another site's post too");
  t.throws(() => keptPost(posts, 's', 2, 'missing', () => { throw new Error('not found'); }), /not found/);
  await t.rejects(async () => keptPostLater(later, 's', 1, 'missing', async () => { throw new Error('not found'); }), /not found/);
  t.equal(posts.size, 3, 'a post not found is not kept');
});

t.test('post JSON cache: a post kept answers at later versions while every one between is a committed change of another post', async (t) => {
  const { PostJsonCache, CHANGE_LOG_LENGTH, CHANGE_LOG_ENTRIES } = await import('../../src/posts/json-cache.js');
  const { RawJson } = await import('../../src/json.js');
  const cache = new PostJsonCache();
  const a = cache.keepPost('s', 1, 'a', new RawJson('"a"'));
  const b = cache.keepPost('s', 1, 'b', new RawJson('"b"'));
  const page = cache.keepPage('s', 1, { page: 1, limit: 20 }, { posts: new RawJson('[]'), pagination: { page: 1, limit: 20, total: 0, pages: 0 } });

  cache.committed('s', 2, 'c');
  cache.committed('s', 3, 'b');
  t.equal(cache.lookupPost('s', 2, 'a'), a, "version 2 changed another post: a's JSON answers");
  t.equal(cache.lookupPost('s', 3, 'a'), a, 'so did version 3');
  t.equal(cache.lookupPost('s', 3, 'b'), undefined, 'version 3 changed b: read anew');
  t.equal(cache.lookupPost('s', 2, 'b'), b, 'at version 2, b was still as kept');
  t.equal(cache.lookupPage('s', 2, { page: 1, limit: 20 }), undefined, 'a page is kept for its version alone');
  t.equal(cache.lookupPage('s', 1, { page: 1, limit: 20 }), page, 'and at its own version it answers');
  t.equal(cache.lookupPost('t', 2, 'a'), undefined, "another site's change log says nothing of this one");

  // A version this process did not see commit (another instance, a rolled-back write, a site setting) breaks the chain.
  cache.committed('s', 5, 'c');
  t.equal(cache.lookupPost('s', 5, 'a'), undefined, 'version 4 unknown: read anew');
  t.equal(cache.lookupPost('s', 2, 'a'), undefined, 'a read at an older version than the one it answered last is read anew');

  // The read at version 5 is kept; one answered later for version 4 does not replace it.
  const a5 = cache.keepPost('s', 5, 'a', new RawJson('"a5"'));
  cache.keepPost('s', 4, 'a', new RawJson('"a4"'));
  t.equal(cache.lookupPost('s', 5, 'a'), a5);

  // The log keeps the latest changes: a post kept further back is read anew.
  for (let version = 6; version <= 6 + CHANGE_LOG_LENGTH; version++) cache.committed('s', version, 'c');
  t.equal(cache.lookupPost('s', 6 + CHANGE_LOG_LENGTH, 'a'), undefined, 'more changes since it was kept than the log holds');
  const fresh = cache.keepPost('s', 6 + CHANGE_LOG_LENGTH, 'a', new RawJson('"fresh"'));
  cache.committed('s', 7 + CHANGE_LOG_LENGTH, 'c');
  cache.committed('s', 7 + CHANGE_LOG_LENGTH, 'c');
  t.equal(cache.lookupPost('s', 7 + CHANGE_LOG_LENGTH, 'a'), fresh);
  t.equal(cache.loggedChanges, CHANGE_LOG_LENGTH, "a site's log is bounded, and a change told twice counts once");

  // Over many sites, the sites written least recently are forgotten first, whole.
  cache.committed('s', 8 + CHANGE_LOG_LENGTH, 'c');
  const sites = CHANGE_LOG_ENTRIES / CHANGE_LOG_LENGTH + 1;
  for (let site = 0; site < sites; site++) for (let version = 1; version <= CHANGE_LOG_LENGTH; version++) cache.committed(`site-${site}`, version, 'p');
  t.equal(cache.loggedChanges, CHANGE_LOG_ENTRIES, 'bounded over all sites');
  t.equal(cache.lookupPost('s', 8 + CHANGE_LOG_LENGTH, 'a'), undefined, "the site written least recently ('s') lost its log: read anew");
  cache.keepPost('site-0', 1, 'q', new RawJson('"q"'));
  t.equal(cache.lookupPost('site-0', 2, 'q'), undefined, 'and so did the next, to make room');
  const last = `site-${sites - 1}`;
  const recent = cache.keepPost(last, 1, 'q', new RawJson('"q"'));
  t.equal(cache.lookupPost(last, CHANGE_LOG_LENGTH, 'q'), recent, 'the most recently written keep theirs');
});
