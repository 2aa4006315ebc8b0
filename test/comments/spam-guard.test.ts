/**
 * The spam guard's rules on readers' comments, each through the routes readers use: a comment
 * breaking one is refused (400 naming the field, or 429 with Retry-After) or kept out of sight
 * (held or spam) with the reason staff see; an ordinary comment passes every rule.
 */
import t, { type Test } from 'tap';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { solve } from '../spam-guard/helpers.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const ADDRESS = '203.0.113.77';

async function setup(t: Test, env: Record<string, string> = {}) {
  const ctx = await buildTestApp(t, { SPAM_GUARD_DIFFICULTY: '100', SPAM_GUARD_MIN_FILL_SECONDS: '0', SPAM_GUARD_RATE_MAX: '0', ...env });
  const post = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Grinders compared', content: 'Burrs matter.', isDraft: false } })).json().data.post;
  const api = `/content/v1/sites/my-blog/posts/${post.slug}/comments`;
  const proof = async () => solve((await ctx.call({ method: 'GET', url: '/content/v1/sites/my-blog/challenge?form=comment', key: null })).json());
  const send = (payload: object, address = ADDRESS) => ctx.app.inject({ method: 'POST', url: api, payload, remoteAddress: address });
  return { ctx, post, api, page: `/sites/my-blog/${post.slug}/`, proof, send };
}

/** The comment as staff see it, by its id. */
async function staffView(ctx: TestApp, id: string) {
  const list = (await ctx.call({ method: 'GET', url: '/api/v1/comments?limit=100' })).json().data.comments as { id: string; status: string; heldFor: string | null }[];
  return list.find((comment) => comment.id === id);
}

t.test('an ordinary comment with a solved challenge passes every rule: waiting only for the moderator, with no reason held', async (t) => {
  const { ctx, send, proof } = await setup(t, { SPAM_GUARD_RATE_MAX: '5' });
  await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { blockedWords: ['casino'] } });
  const sent = await send({ name: 'Ada', email: 'ada@example.com', body: 'Three links are fine: https://a.example https://b.example https://c.example\nA class act.', altcha: await proof() });
  t.equal(sent.statusCode, 201);
  t.match(await staffView(ctx, sent.json().data.comment.id), { status: 'pending', heldFor: null });
  t.notOk(sent.headers['retry-after']);
});

t.test('no solved challenge (no JavaScript): held for a moderator, whatever the site mode', async (t) => {
  const { ctx, send, page } = await setup(t);
  await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { comments: 'open' } });
  const json = await send({ name: 'Bo', body: 'No script here.' });
  t.equal(json.statusCode, 201);
  t.equal(json.json().data.comment.status, 'pending');
  t.match(await staffView(ctx, json.json().data.comment.id), { status: 'pending', heldFor: 'no proof of work (sent without JavaScript)' });

  const form = await ctx.call({ method: 'POST', url: `${page}comments`, key: null, headers: FORM, payload: new URLSearchParams({ name: 'Bo', body: 'By the form.' }).toString() });
  t.equal(form.statusCode, 303);
  t.match(form.headers.location, '?comment=pending#comments');
  const held = (await ctx.call({ method: 'GET', url: '/api/v1/comments?status=pending' })).json().data.comments;
  t.equal(held.length, 2);
  t.ok(held.every((comment: { heldFor: string }) => comment.heldFor === 'no proof of work (sent without JavaScript)'));
});

t.test('a replayed challenge is refused: 400 naming the field, nothing kept', async (t) => {
  const { ctx, send, proof } = await setup(t);
  const answer = await proof();
  t.equal((await send({ name: 'Cy', body: 'Once.', altcha: answer })).statusCode, 201);
  const again = await send({ name: 'Cy', body: 'Twice.', altcha: answer }, '198.51.100.20');
  t.equal(again.statusCode, 400);
  t.match(again.json().error, { code: 'VALIDATION_ERROR', details: [{ path: '/body/altcha', message: 'the challenge was already used' }] });
  const forged = await send({ name: 'Cy', body: 'Forged.', altcha: Buffer.from('{"nope":1}').toString('base64') });
  t.match(forged.json().error.details, [{ path: '/body/altcha', message: 'the proof of work is not readable' }]);
  t.equal(await ctx.count('select count(*) as n from comments'), 1);
});

t.test('a filled honeypot: answered like any comment, kept as spam with its reason, never shown', async (t) => {
  const { ctx, send, proof, page } = await setup(t);
  const json = await send({ name: 'Bot', body: 'Buy now.', website: 'https://spam.example', altcha: await proof() });
  t.equal(json.statusCode, 201, 'a robot learns nothing');
  t.equal(json.json().data.comment.status, 'pending');
  t.match(await staffView(ctx, json.json().data.comment.id), { status: 'spam', heldFor: 'honeypot field filled' });

  const form = await ctx.call({ method: 'POST', url: `${page}comments`, key: null, headers: FORM, payload: new URLSearchParams({ name: 'Bot', body: 'Form spam.', website: 'x' }).toString() });
  t.equal(form.statusCode, 303);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/comments?status=spam' })).json().data.pagination.total, 2);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/comments?status=pending' })).json().data.pagination.total, 0, 'not in the moderation queue');
});

t.test('sent sooner after the form was shown than a person could: spam with the time it took', async (t) => {
  const { ctx, send, proof } = await setup(t, { SPAM_GUARD_MIN_FILL_SECONDS: '1' });
  const fast = await send({ name: 'Dee', body: 'Instant.', altcha: await proof() });
  t.equal(fast.statusCode, 201);
  t.match(await staffView(ctx, fast.json().data.comment.id), { status: 'spam', heldFor: /^submitted 0(\.\d)? s after the form was shown$/ });

  const answer = await proof();
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const patient = await send({ name: 'Dee', body: 'Took my time.', altcha: answer });
  t.match(await staffView(ctx, patient.json().data.comment.id), { status: 'pending', heldFor: null }, 'after the minimum time it passes');
});

t.test('more than 3 links: held with how many', async (t) => {
  const { ctx, send, proof } = await setup(t);
  const body = 'See https://a.example, https://b.example, www.shop.com and https://d.example/x?y=1';
  const held = await send({ name: 'Eve', body, altcha: await proof() });
  t.equal(held.statusCode, 201);
  t.match(await staffView(ctx, held.json().data.comment.id), { status: 'pending', heldFor: '4 links' });
  // An open site still holds it, even for a returning author.
  await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { comments: 'open' } });
  const first = await send({ name: 'Eve', email: 'eve@example.com', body: 'Hello.', altcha: await proof() });
  await ctx.call({ method: 'PATCH', url: `/api/v1/comments/${first.json().data.comment.id}`, payload: { status: 'approved' } });
  const again = await send({ name: 'Eve', email: 'eve@example.com', body, altcha: await proof() });
  t.equal(again.json().data.comment.status, 'pending');
  t.match(await staffView(ctx, again.json().data.comment.id), { heldFor: '4 links' });
});

t.test("a word of the site's blocked list: spam naming the word (whole words, case and accents ignored)", async (t) => {
  const { ctx, send, proof } = await setup(t);
  const site = await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { blockedWords: ['casino', 'pas cher', ' casino '] } });
  t.same(site.json().data.site.blockedWords, ['casino', 'pas cher'], 'trimmed, without repeats');
  const blocked = await send({ name: 'Fay', body: 'Best CASINO bonus', altcha: await proof() });
  t.match(await staffView(ctx, blocked.json().data.comment.id), { status: 'spam', heldFor: 'blocked word "casino"' });
  const inName = await send({ name: 'Montres pas chèr', body: 'Hello', altcha: await proof() });
  t.match(await staffView(ctx, inName.json().data.comment.id), { status: 'spam', heldFor: 'blocked word "pas cher"' }, 'the name counts too');
  const hidden = await send({ name: 'Gus', body: 'cas\u200Bino time', altcha: await proof() });
  t.match(await staffView(ctx, hidden.json().data.comment.id), { status: 'spam' }, 'a zero-width space hides nothing');
  const fine = await send({ name: 'Hal', body: 'The casinos of Monte Carlo', altcha: await proof() });
  t.match(await staffView(ctx, fine.json().data.comment.id), { status: 'pending', heldFor: null }, 'another word that starts the same is fine');

  const tooMany = await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { blockedWords: Array.from({ length: 501 }, (_, i) => `w${i}`) } });
  t.equal(tooMany.statusCode, 400);
});

t.test('too many from one address: 429 with Retry-After (JSON and form); other addresses go on; the address is stored nowhere', async (t) => {
  const { ctx, send, proof, page } = await setup(t, { SPAM_GUARD_RATE_MAX: '2', SPAM_GUARD_RATE_WINDOW_SECONDS: '600' });
  for (const body of ['one', 'two']) t.equal((await send({ name: 'Ivy', body, altcha: await proof() })).statusCode, 201);
  const limited = await send({ name: 'Ivy', body: 'three', altcha: await proof() });
  t.equal(limited.statusCode, 429);
  t.match(limited.json().error, { code: 'RATE_LIMITED', message: /Too many comments from this address/ });
  const retryAfter = Number(limited.headers['retry-after']);
  t.ok(retryAfter > 0 && retryAfter <= 600, 'Retry-After within the window');

  const form = await ctx.app.inject({ method: 'POST', url: `${page}comments`, headers: FORM, payload: new URLSearchParams({ name: 'Ivy', body: 'four' }).toString(), remoteAddress: ADDRESS });
  t.equal(form.statusCode, 429);
  t.ok(Number(form.headers['retry-after']) > 0);
  t.match(form.body, /Too many comments from here: please wait \d+ seconds and try again\./);
  t.match(form.body, '>four</textarea>', 'what was typed is kept');

  t.equal((await send({ name: 'Jo', body: 'another reader', altcha: await proof() }, '198.51.100.44')).statusCode, 201);

  const tables =
    ctx.app.backend.kind === 'sqlite'
      ? await ctx.rows<{ name: string }>("select name from sqlite_master where type = 'table'")
      : await ctx.rows<{ name: string }>("select table_name as name from information_schema.tables where table_schema = 'public'");
  for (const { name } of tables) {
    const rows = await ctx.rows(`select * from "${name}"`);
    t.notMatch(JSON.stringify(rows), ADDRESS, `${name}: no client address`);
  }
});
