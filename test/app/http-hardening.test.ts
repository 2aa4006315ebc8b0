/**
 * A hostile network: clients that trickle or stall their bodies, malformed HTTP, clients that
 * hang up mid-upload; and what shutdown does while requests are still in flight.
 */
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import type { AppGenerator } from '../../src/generation/service.js';
import { BOOTSTRAP_KEY, buildTestApp, loggedApp, waitFor } from '../helpers/app.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function listen(app: { listen(o: object): Promise<string>; server: net.Server }): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as net.AddressInfo).port;
}

/** A raw connection: what the server answers, and when it closed the connection. */
async function rawRequest(port: number, send: (socket: net.Socket) => Promise<void> | void, timeoutMs = 15_000) {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => {});
  const closed = once(socket, 'close').then(() => Date.now());
  const started = Date.now();
  void Promise.resolve(send(socket)).catch(() => {});
  const closedAt = await Promise.race([closed, sleep(timeoutMs).then(() => null)]);
  socket.destroy();
  const [head = '', body = ''] = received.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1]?.trim();
  return { status, head, body, header, closedAfterMs: closedAt === null ? null : closedAt - started };
}

const tmpFiles = (dataDir: string) => fs.readdirSync(path.join(dataDir, 'storage', '.tmp'));

const uploadHead = (boundary: string, withKey = true) =>
  `POST /api/v1/knowledge HTTP/1.1\r\nHost: localhost\r\n${withKey ? `Authorization: Bearer ${BOOTSTRAP_KEY}\r\n` : ''}` +
  `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 100000\r\n\r\n` +
  `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\nContent-Type: text/plain\r\n\r\nhello`;

t.test('a body trickled one byte at a time is cut off at REQUEST_TIMEOUT_MS, with or without a key', async (t) => {
  const ctx = await buildTestApp(t, { REQUEST_TIMEOUT_MS: '1500' });
  const port = await listen(ctx.app);
  for (const withKey of [true, false]) {
    let stop = false;
    const res = await rawRequest(port, async (socket) => {
      socket.write(uploadHead('trickle', withKey));
      // Never idle long enough for the idle cut: only the whole-request deadline stops it.
      while (!stop && !socket.destroyed) {
        await sleep(200);
        socket.write('a');
      }
    });
    stop = true;
    t.ok(res.closedAfterMs !== null && res.closedAfterMs < 6000, `${withKey ? 'with' : 'without'} a key: closed after ${res.closedAfterMs} ms`);
    if (withKey) {
      t.equal(res.status, 408);
      t.match(JSON.parse(res.body), { success: false, error: { code: 'REQUEST_TIMEOUT', requestId: res.header('x-request-id') } });
    } else {
      t.equal(res.status, 401, 'refused at once, then cut off all the same');
    }
  }
  await waitFor(() => tmpFiles(ctx.dataDir).length === 0, 'the partial upload to be removed');
  t.same(tmpFiles(ctx.dataDir), []);
});

t.test('a body that stops arriving is cut off when it idles, before the whole-request deadline', async (t) => {
  const ctx = await buildTestApp(t, { REQUEST_TIMEOUT_MS: '8000' });
  const port = await listen(ctx.app);
  const res = await rawRequest(port, (socket) => void socket.write(uploadHead('stalled')), 20_000);
  t.equal(res.status, 408);
  t.equal(JSON.parse(res.body).error.code, 'REQUEST_TIMEOUT');
  // The idle cut is min(30 s, REQUEST_TIMEOUT_MS / 2) = 4 s here; the deadline 8 s.
  t.ok(res.closedAfterMs !== null && res.closedAfterMs < 7000, `closed after ${res.closedAfterMs} ms`);
  await waitFor(() => tmpFiles(ctx.dataDir).length === 0, 'the partial upload to be removed');
});

t.test('a generation waiting on the model is not cut by REQUEST_TIMEOUT_MS', async (t) => {
  const slowGenerator: AppGenerator = {
    async generate(request) {
      await sleep(2500);
      return {
        provider: 'builtin',
        model: 'slow-test-model',
        post: { title: `On ${request.topic}`, description: 'A slow one', category: 'Tests', tags: ['slow'], content: '# Slow\n\nTook its time.' },
      };
    },
    async status() {
      return { mode: 'builtin', active: 'builtin', ollama: { host: '', model: '', reachable: false, modelAvailable: false } };
    },
  };
  const ctx = await buildTestApp(t, { REQUEST_TIMEOUT_MS: '1000' }, { generator: slowGenerator });
  const port = await listen(ctx.app);
  const started = Date.now();
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/posts/generate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ topic: 'Patience' }),
  });
  t.equal(res.status, 201);
  t.ok(Date.now() - started >= 2400, 'answered after the generation, well past the request timeout');
  t.equal((await res.json()).post.title, 'On Patience');
});

t.test("errors of Node's HTTP parser are answered in the envelope, with X-Request-Id", async (t) => {
  const ctx = await buildTestApp(t);
  const port = await listen(ctx.app);
  const cases: [string, string, number, string, RegExp][] = [
    ['headers too large', `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'HEADERS_TOO_LARGE', /too large/],
    // With a key: the parser meets the broken body only once the request got past authentication.
    [
      'malformed chunked encoding',
      `POST /api/v1/posts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${BOOTSTRAP_KEY}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      400,
      'BAD_REQUEST',
      /chunked/,
    ],
    ['bad Content-Length', 'POST /api/v1/posts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 12abc\r\n\r\n{}', 400, 'BAD_REQUEST', /Content-Length/],
    ['garbage', 'HELLO THERE\r\n\r\n', 400, 'BAD_REQUEST', /./],
  ];
  for (const [what, request, status, code, message] of cases) {
    const res = await rawRequest(port, (socket) => void socket.write(request));
    t.equal(res.status, status, `${what}: ${status}`);
    const body = JSON.parse(res.body);
    t.equal(body.success, false, `${what}: envelope`);
    t.equal(body.error.code, code, `${what}: ${code}`);
    t.match(body.error.message, message);
    t.ok(res.header('x-request-id') && res.header('x-request-id') === body.error.requestId, `${what}: X-Request-Id`);
    t.match(res.header('content-type'), /application\/json/);
  }
  const traversal = await rawRequest(port, (socket) => void socket.write('GET /docs/static/../.. HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
  t.equal(traversal.status, 403);
  t.equal(JSON.parse(traversal.body).error.code, 'FORBIDDEN', '403 says FORBIDDEN, not BAD_REQUEST');
});


t.test('an upload the client abandons is logged as information, not as a server error', async (t) => {
  const { app, entries, dataDir } = await loggedApp(t, {}, { jobs: { autoStart: false } });
  const port = await listen(app);
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(uploadHead('gone') + 'x'.repeat(64 * 1024));
  await waitFor(() => tmpFiles(dataDir).length > 0, 'the upload to reach the disk');
  socket.destroy();
  await waitFor(() => tmpFiles(dataDir).length === 0, 'the partial file to be removed');
  await waitFor(() => entries().some((l) => /client went away/.test(l.msg)), 'the abandonment to be logged');
  t.same(entries().filter((l) => l.level >= 50).map((l) => l.msg), [], 'no error-level line');
  t.equal(entries().find((l) => /client went away/.test(l.msg))?.level, 30, 'info');
});

t.test('on shutdown the job loop stops claiming first, while in-flight requests finish', async (t) => {
  const ctx = await buildTestApp(t);
  const port = await listen(ctx.app);
  // A request in flight: its body is still coming, so closing waits for it.
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.on('error', () => {});
  socket.write(`POST /api/v1/posts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${BOOTSTRAP_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"title":`);
  await sleep(100);
  const closing = ctx.app.close();
  await sleep(50);
  // A task falls due while the server is closing: it must stay pending for the next start.
  const { tasks } = await ctx.app.tasks.schedule(ctx.site.id, { posts: [{ topic: 'Late' }] });
  await sleep(300); // six polls of the loop (JOB_POLL_MS=50 in tests)
  await ctx.app.jobs.tick();
  const { status, attempts } = await ctx.app.tasks.get(ctx.site.id, tasks[0]!.id);
  t.same({ status, attempts }, { status: 'pending', attempts: 0 }, 'not claimed during shutdown');
  t.equal(ctx.app.jobs.status().state, 'stopping');
  socket.destroy();
  await closing;
});

t.test('an upload refused before its body is read ends its connection, so the next request on it does not hang', async (t) => {
  const ctx = await buildTestApp(t, { SITE_STORAGE_QUOTA_MB: '1', REQUEST_TIMEOUT_MS: '20000' });
  const port = await listen(ctx.app);
  const upload = (name: string, bytes: number) => {
    const boundary = 'refused';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n${'coffee '.repeat(bytes / 7)}\r\n--${boundary}--\r\n`;
    return fetch(`http://127.0.0.1:${port}/api/v1/knowledge`, {
      method: 'POST',
      headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    });
  };
  t.equal((await upload('first.txt', 700_000)).status, 201, 'the first file and its index take the whole quota');
  await ctx.app.indexer.whenIdle();
  const refused = await upload('second.txt', 2_800_000);
  t.equal(refused.status, 413);
  t.equal(refused.headers.get('connection'), 'close', 'the unread body is not left on a kept-alive connection');
  await refused.json();
  const started = Date.now();
  const next = await fetch(`http://127.0.0.1:${port}/api/v1/knowledge`, { headers: { authorization: `Bearer ${BOOTSTRAP_KEY}` } });
  t.equal(next.status, 200);
  t.ok(Date.now() - started < 3000, `the next request answered in ${Date.now() - started} ms`);
  await ctx.app.indexer.whenIdle();
});
