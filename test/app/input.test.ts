/**
 * No input makes a 5xx: deeply nested JSON, times that do not exist, and what Node's HTTP
 * parser would answer on its own, each answered in the error envelope with X-Request-Id.
 */
import { once } from 'node:events';
import net from 'node:net';
import t from 'tap';
import { MAX_JSON_DEPTH } from '../../src/limits.js';
import { buildTestApp } from '../helpers/app.js';

const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
const nestedArray = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

t.test('JSON nested past the limit is a 400 naming it, with or without an Idempotency-Key', async (t) => {
  const ctx = await buildTestApp(t);
  for (const headers of [{}, { 'idempotency-key': 'deep-1' }]) {
    for (const body of [`{"title":"Deep","extra":${nested(5000)}}`, `{"title":"Deep","tags":${nestedArray(5000)}}`]) {
      const res = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: body, headers: { 'content-type': 'application/json', ...headers } });
      t.equal(res.statusCode, 400, `400 (${Object.keys(headers).join() || 'no key'})`);
      t.equal(res.json().error.code, 'VALIDATION_ERROR');
      t.match(res.json().error.message, String(MAX_JSON_DEPTH), 'the message names the limit');
      t.ok(res.headers['x-request-id']);
    }
  }
  // Nesting within the limit, brackets inside strings, escaped quotes: not counted as depth
  // (the body gets as far as validation, which names its unknown field, not its depth).
  const fine = await ctx.call({
    method: 'POST',
    url: '/api/v1/posts',
    payload: `{"title":"Brackets \\" [[[[{{{{","content":"${'['.repeat(100)}","extra":${nested(MAX_JSON_DEPTH - 1)}}`,
    headers: { 'content-type': 'application/json', 'idempotency-key': 'fine-1' },
  });
  t.equal(fine.statusCode, 400, fine.body);
  t.same(fine.json().error.details.map((d: { path: string }) => d.path), ['/body/extra'], 'refused for its unknown field, not its depth');
  const post = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: `{"title":"Brackets \\" [[[[{{{{","content":"${'['.repeat(100)}"}`, headers: { 'content-type': 'application/json' } });
  t.equal(post.statusCode, 201, post.body);
  // PATCH and a webhook body take the same parser.
  const patch = await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${post.json().data.post.id}`, payload: `{"extra":${nested(MAX_JSON_DEPTH + 1)}}`, headers: { 'content-type': 'application/json' } });
  t.equal(patch.statusCode, 400);
});

t.test('a time that does not exist is a 400 naming its field', async (t) => {
  const ctx = await buildTestApp(t, {}, { jobs: { autoStart: false } });
  const bad = ['2031-06-30T23:59:60Z', '2026-02-30T10:00:00Z', '2026-13-01T00:00:00Z', '2025-02-29T10:00:00Z'];
  for (const when of bad) {
    const cases: [string, Record<string, unknown>][] = [
      ['/body/posts/0/scheduledFor', { posts: [{ topic: 'Leap', scheduledFor: when }] }],
      ['/body/startDate', { startDate: when, endDate: '2032-01-01T00:00:00Z', posts: [{ topic: 'Leap' }] }],
      ['/body/endDate', { startDate: '2026-01-01T00:00:00Z', endDate: when, posts: [{ topic: 'Leap' }] }],
    ];
    for (const [field, payload] of cases) {
      for (const headers of [{}, { 'idempotency-key': `leap-${field}-${when}` }]) {
        const res = await ctx.call({ method: 'POST', url: '/api/v1/posts/batch', payload, headers });
        t.equal(res.statusCode, 400, `${field} ${when}: 400`);
        t.equal(res.json().error.code, 'VALIDATION_ERROR');
        t.ok(res.json().error.details.some((d: { path: string }) => d.path === field), `${field} ${when}: names ${field} (${res.body})`);
      }
    }
  }
  // A real instant still passes, with an offset too, and 29 February of a leap year.
  for (const when of ['2028-02-29T10:00:00Z', '2031-06-30T23:59:59.999+02:00']) {
    const res = await ctx.call({ method: 'POST', url: '/api/v1/posts/batch', payload: { posts: [{ topic: 'Fine', scheduledFor: when }] } });
    t.equal(res.statusCode, 202, `${when}: ${res.body}`);
  }
});

async function raw(port: number, request: string) {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => {});
  socket.write(request);
  await once(socket, 'close');
  const [head = '', body = ''] = received.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body, header: (name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1]?.trim() };
}

t.test("what Node's HTTP server answers on its own comes in the envelope with X-Request-Id", async (t) => {
  const ctx = await buildTestApp(t);
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (ctx.app.server.address() as net.AddressInfo).port;

  const noHost = await raw(port, 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n');
  t.equal(noHost.status, 400);
  t.ok(noHost.header('X-Request-Id'), 'X-Request-Id');
  t.match(JSON.parse(noHost.body), { success: false, error: { code: 'BAD_REQUEST', message: /Host/, requestId: noHost.header('X-Request-Id') } });

  const expect = await raw(port, 'POST /api/v1/posts HTTP/1.1\r\nHost: localhost\r\nExpect: something-else\r\nContent-Length: 2\r\nContent-Type: application/json\r\n\r\n{}');
  t.equal(expect.status, 417);
  t.ok(expect.header('X-Request-Id'), 'X-Request-Id');
  t.match(JSON.parse(expect.body), { success: false, error: { code: 'EXPECTATION_FAILED', requestId: expect.header('X-Request-Id') } });

  // HTTP/1.0 needs no Host; 100-continue still works.
  const old = await raw(port, 'GET /health HTTP/1.0\r\n\r\n');
  t.match(old.head, /^HTTP\/1\.1 200/);
});

t.test('the statuses the service answers are declared in the document', async (t) => {
  const ctx = await buildTestApp(t);
  const document = (await ctx.call({ method: 'GET', url: '/docs/json', key: null })).json();
  for (const path of ['/content/v1/sites/{handle}/posts', '/content/v1/sites/{handle}/posts/{slug}']) {
    t.ok(document.paths[path].get.responses['304'], `${path}: 304`);
  }
  for (const path of ['/health', '/ready']) {
    t.ok(document.paths[path].get.responses['4XX'], `${path}: 4xx (431 headers too large, 400 malformed)`);
  }
  // The 304 itself.
  const handle = (await ctx.call({ method: 'GET', url: '/api/v1/site' })).json().data.site.handle;
  const first = await ctx.call({ method: 'GET', url: `/content/v1/sites/${handle}/posts`, key: null });
  const again = await ctx.call({ method: 'GET', url: `/content/v1/sites/${handle}/posts`, key: null, headers: { 'if-none-match': String(first.headers.etag) } });
  t.equal(again.statusCode, 304);
});
