import t from 'tap';
import { buildTestApp, UUID_V4 } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

// The staff side of newsletters: settings, the post switch, the subscriber list, CSV import
// (line by line, all or none) and export, erasure; on both databases (test/on-postgres).

const importCsv = (ctx: Awaited<ReturnType<typeof buildTestApp>>, csv: string) => {
  const { payload, headers } = multipart([{ name: 'file', filename: 'list.csv', content: csv, contentType: 'text/csv' }]);
  return ctx.call({ method: 'POST', url: '/api/v1/subscribers/import', payload, headers });
};

t.test('newsletter settings: off by default, changed by PATCH /site, checked', async (t) => {
  const ctx = await buildTestApp(t);
  const before = (await ctx.call({ method: 'GET', url: '/api/v1/site' })).json();
  t.same(before.data.site.newsletter, { enabled: false, senderName: null, replyTo: null, footer: null });
  const patched = await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { newsletter: { enabled: true, senderName: 'The Notes', replyTo: 'Editor@Example.com', footer: 'Sent from Berlin' } } });
  t.equal(patched.statusCode, 200, patched.body);
  t.same(patched.json().data.site.newsletter, { enabled: true, senderName: 'The Notes', replyTo: 'editor@example.com', footer: 'Sent from Berlin' });
  const bad = await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { newsletter: { replyTo: 'not an address' } } });
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().error.code, 'VALIDATION_ERROR');
  const injected = await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { newsletter: { senderName: 'Evil\r\nBcc: x@example.com' } } });
  t.equal(injected.statusCode, 400);
  const partial = await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { newsletter: { enabled: false } } });
  t.same(partial.json().data.site.newsletter, { enabled: false, senderName: 'The Notes', replyTo: 'editor@example.com', footer: 'Sent from Berlin' });
});

t.test('posts carry sendNewsletter: true by default, false on create or PATCH', async (t) => {
  const ctx = await buildTestApp(t);
  const created = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'One' } });
  const id = created.json().data.post.id;
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}` })).json().data.post.sendNewsletter, true);
  const optOut = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Two', sendNewsletter: false } });
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${optOut.json().data.post.id}` })).json().data.post.sendNewsletter, false);
  const patched = await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, payload: { sendNewsletter: false } });
  t.equal(patched.statusCode, 200, patched.body);
  t.equal(patched.json().data.post.sendNewsletter, false);
  t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${id}`, payload: { sendNewsletter: 'no' } })).statusCode, 400);
  const progress = await ctx.call({ method: 'GET', url: `/api/v1/posts/${id}/newsletter` });
  t.equal(progress.statusCode, 200);
  t.same(progress.json().data.newsletter, { status: 'none', recipients: 0, sent: 0, failed: 0, bounced: 0, createdAt: null, finishedAt: null });
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/posts/00000000-0000-4000-8000-000000000000/newsletter' })).statusCode, 404);
});

t.test('import: addresses folded, bad and repeated lines reported by line, the rest added at once', async (t) => {
  const ctx = await buildTestApp(t);
  const first = await importCsv(ctx, 'email,name\nAda@Example.com,Ada\nnot-an-address,X\nbob@example.org,Bob\nada@example.com,Again\n\n"=cmd@example.com",Y\n');
  t.equal(first.statusCode, 200, first.body);
  t.same(first.json().data.problems, [
    { line: 3, email: 'not-an-address', reason: 'invalid' },
    { line: 5, email: 'ada@example.com', reason: 'duplicate' },
  ]);
  t.equal(first.json().data.imported, 3);
  const again = await importCsv(ctx, 'bob@example.org\ncarol@example.net\n');
  t.same(again.json().data, { message: 'Imported 1 subscriber', imported: 1, problems: [{ line: 1, email: 'bob@example.org', reason: 'exists' }] });

  const list = (await ctx.call({ method: 'GET', url: '/api/v1/subscribers?limit=10' })).json().data;
  t.equal(list.pagination.total, 4);
  t.same(list.counts, { pending: 0, active: 4, unsubscribed: 0, bouncing: 0 });
  t.ok(list.subscribers.every((s: { status: string; consentSource: string; consentedAt: string | null; id: string }) => s.status === 'active' && s.consentSource === 'import' && s.consentedAt && UUID_V4.test(s.id)));
  t.notOk(JSON.stringify(list).includes('Token'), 'no token in the list');
  const searched = (await ctx.call({ method: 'GET', url: '/api/v1/subscribers?q=EXAMPLE.O' })).json().data;
  t.same(searched.subscribers.map((s: { email: string }) => s.email), ['bob@example.org']);
  const wildcard = (await ctx.call({ method: 'GET', url: '/api/v1/subscribers?q=%25' })).json().data;
  t.equal(wildcard.pagination.total, 0, '% matches itself');
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/subscribers?status=pending' })).json().data.pagination.total, 0);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/subscribers?status=gone' })).statusCode, 400);

  const csv = await ctx.call({ method: 'GET', url: '/api/v1/subscribers.csv' });
  t.equal(csv.statusCode, 200);
  t.match(csv.headers['content-type'], /^text\/csv/);
  const lines = csv.body.trim().split('\r\n');
  t.equal(lines[0], 'email,status,consent_source,consented_at,created_at');
  t.equal(lines.length, 5);
  t.ok(lines.some((line) => line.startsWith("'=cmd@example.com,")), 'a formula-like cell is defused');

  const ada = list.subscribers.find((s: { email: string }) => s.email === 'ada@example.com');
  const erased = await ctx.call({ method: 'DELETE', url: `/api/v1/subscribers/${ada.id}` });
  t.equal(erased.statusCode, 200);
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/subscribers/${ada.id}` })).statusCode, 404);
  t.equal(await ctx.count('select count(*) as n from subscribers where email = ?', 'ada@example.com'), 0, 'the address is gone, not kept');
});

t.test('import refuses what is not one CSV file, and another site sees nothing', async (t) => {
  const ctx = await buildTestApp(t);
  t.equal((await importCsv(ctx, '')).statusCode, 400);
  const none = multipart([{ name: 'other', filename: 'x.csv', content: 'a@example.com' }]);
  t.equal((await ctx.call({ method: 'POST', url: '/api/v1/subscribers/import', ...none })).statusCode, 400);
  t.equal((await importCsv(ctx, 'a@example.com\n"unterminated\n')).statusCode, 400);
  t.equal(await ctx.count('select count(*) as n from subscribers'), 0, 'nothing half-imported');
  await importCsv(ctx, 'a@example.com\n');
  const other = await ctx.addSite('Other');
  const theirs = (await ctx.call({ method: 'GET', url: '/api/v1/subscribers', key: other.key })).json().data;
  t.equal(theirs.pagination.total, 0);
  const mine = (await ctx.call({ method: 'GET', url: '/api/v1/subscribers' })).json().data.subscribers[0];
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/subscribers/${mine.id}`, key: other.key })).statusCode, 404);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/subscribers', key: null })).statusCode, 401);
});

t.test('subscribers over time: sign-ups and unsubscribes per day in the site time zone, the active count', async (t) => {
  const ctx = await buildTestApp(t);
  await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { newsletter: { enabled: true } } });
  t.equal((await importCsv(ctx, 'email\nann@example.com\nben@example.com\ncid@example.com\n')).statusCode, 200);
  const [row] = await ctx.rows<{ unsubscribe_token: string }>('select unsubscribe_token from subscribers where email = ?', 'ben@example.com');
  const left = await ctx.call({ method: 'POST', url: `/sites/my-blog/unsubscribe?token=${row!.unsubscribe_token}`, key: null, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' });
  t.equal(left.statusCode, 200);

  const res = await ctx.call({ method: 'GET', url: '/api/v1/subscribers/stats' });
  t.equal(res.statusCode, 200, res.body);
  const data = res.json().data;
  t.equal(data.days.length, 30, 'the last 30 days by default, as the other stats');
  t.equal(data.active, 2);
  const today = data.days.at(-1);
  t.same(today, { day: data.to, subscribed: 3, unsubscribed: 1 }, 'today: three imported, one left');
  t.same(data.days.slice(0, -1).filter((d: { subscribed: number; unsubscribed: number }) => d.subscribed || d.unsubscribed), [], 'nothing on the days before');

  const earlier = await ctx.call({ method: 'GET', url: '/api/v1/subscribers/stats?from=2020-01-01&to=2020-01-31' });
  t.same(earlier.json().data.days.reduce((n: number, d: { subscribed: number }) => n + d.subscribed, 0), 0, 'a range before them counts none');
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/subscribers/stats?to=2031-02-30' })).statusCode, 400, 'not a real day');
  const other = await ctx.addSite('Other');
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/subscribers/stats', key: other.key })).json().data.active, 0, 'another site sees none of them');
});
