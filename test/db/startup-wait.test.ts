import { once } from 'node:events';
import net from 'node:net';
import t from 'tap';
import { BOOTSTRAP_KEY, spawnServer, tempDataDir, waitFor } from '../helpers/app.js';
import { closedPortUrl } from '../helpers/fake-ollama.js';
import { postgresTests, startPostgres } from '../helpers/postgres.js';
import { startS3 } from '../helpers/s3.js';

// A start while PostgreSQL or the bucket cannot be reached yet (the services of a compose file
// start together) waits for them, up to STARTUP_WAIT_SECONDS, saying so on stderr; then it fails.

/** The real server in a child process, with what it wrote so far and a promise of its address. */
function watch(env: Record<string, string>) {
  const child = spawnServer({ PORT: '0', LOG_LEVEL: 'info', BOOTSTRAP_API_KEY: BOOTSTRAP_KEY, ...env });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    exited,
    stderr: () => stderr,
    listening: () => stdout.match(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/)?.[1] ?? null,
  };
}

/** A TCP forwarder from `port` to `target` (host:port): the database "comes up" on a port that was closed. */
async function forward(t: { teardown(fn: () => unknown): void }, port: number, target: URL) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  t.teardown(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
}

postgresTests(() => {
  t.test('a PostgreSQL that comes up during STARTUP_WAIT_SECONDS: the server waits, says so, then starts and serves', async (t) => {
    const real = new URL(await startPostgres(t));
    const port = Number(new URL(await closedPortUrl()).port);
    const url = new URL(real);
    url.port = String(port);
    const server = watch({ DATA_DIR: tempDataDir(t), DATABASE_URL: url.href, STARTUP_WAIT_SECONDS: '60' });
    t.teardown(() => void server.child.kill('SIGKILL'));
    await waitFor(() => /Waiting for it \(STARTUP_WAIT_SECONDS\): try 2/.test(server.stderr()), 'the first wait');
    t.match(server.stderr(), /^Cannot use the PostgreSQL database at .*\(DATABASE_URL\): .*ECONNREFUSED/);
    t.notMatch(server.stderr(), real.password, 'the password is never printed');
    t.equal(server.listening(), null, 'not listening while it waits');
    await forward(t, port, real);
    const address = await waitFor(() => server.listening(), 'the server listening', 60_000);
    // The first site (its key) is made once listening: wait for that, not a fixed time.
    const posts = () => fetch(`${address}/api/v1/posts`, { headers: { authorization: `Bearer ${BOOTSTRAP_KEY}` } }).then((res) => res.status === 200);
    t.ok(await waitFor(posts, 'the first site answering'));
    server.child.kill('SIGTERM');
    t.equal(await server.exited, 0);
  });

  t.test('a PostgreSQL still unreachable when STARTUP_WAIT_SECONDS runs out: exit 1 after several tries', async (t) => {
    const url = new URL(await startPostgres(t));
    url.port = new URL(await closedPortUrl()).port;
    const started = Date.now();
    // 4 s: under a loaded CI machine one try (building the app, then the refused connection) took past 2 s.
    const server = watch({ DATA_DIR: tempDataDir(t), DATABASE_URL: url.href, STARTUP_WAIT_SECONDS: '4' });
    t.equal(await server.exited, 1);
    t.ok(Date.now() - started >= 4000, 'it waited the time it was given');
    t.ok((server.stderr().match(/Waiting for it/g) ?? []).length >= 1, 'tried again, saying so');
    t.match(server.stderr().trim().split('\n').at(-1), /^Cannot use the PostgreSQL database at .*ECONNREFUSED/, 'ends with the reason');
  });
});

t.test('a bucket that comes up during STARTUP_WAIT_SECONDS: the server waits, then starts and stores there', async (t) => {
  const s3 = await startS3(t);
  await s3.stop();
  const server = watch({ DATA_DIR: tempDataDir(t), ...s3.env, STARTUP_WAIT_SECONDS: '60' });
  t.teardown(() => void server.child.kill('SIGKILL'));
  await waitFor(() => /Waiting for it \(STARTUP_WAIT_SECONDS\)/.test(server.stderr()), 'the first wait');
  t.match(server.stderr(), /^Storage error: cannot reach the bucket "blog"/);
  await s3.start();
  const address = await waitFor(() => server.listening(), 'the server listening', 60_000).catch((error) => {
    throw new Error(`${error.message}; it wrote: ${server.stderr()}`);
  });
  const ready = await (await fetch(`${address}/ready`, { headers: { authorization: `Bearer ${BOOTSTRAP_KEY}` } })).json();
  t.match(ready, { storage: 'ok', store: { kind: 's3', bucket: 'blog' } });
  server.child.kill('SIGTERM');
  t.equal(await server.exited, 0);
});

t.test('what will not pass by waiting (a refused key) fails the start at once', async (t) => {
  const s3 = await startS3(t);
  const server = watch({ DATA_DIR: tempDataDir(t), ...s3.env, AWS_ACCESS_KEY_ID: 'NOT-A-KEY', STARTUP_WAIT_SECONDS: '60' });
  t.equal(await server.exited, 1);
  t.notMatch(server.stderr(), /Waiting for it/);
  t.match(server.stderr().trim(), /^Storage error: access to the bucket "blog" .* was refused/);
});
