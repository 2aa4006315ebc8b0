import { Writable } from 'node:stream';
import Fastify from 'fastify';
import t from 'tap';
import blogApp, { serverOptions } from '../../src/app.js';
import { SignInThrottle, sessionAlive, DAY_MS, HOUR_MS } from '../../src/accounts/rules.js';
import { buildTestApp, onPostgres, tempDataDir, testConfig } from '../helpers/app.js';
import { startPostgres } from '../helpers/postgres.js';
import { PASSWORD, addUser } from '../helpers/accounts.js';

t.test('5 failures for one email in 15 minutes: 429 with Retry-After, logged without the password', async (t) => {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const database: Record<string, string> = onPostgres ? { DATABASE_URL: await startPostgres(t) } : {};
  const config = testConfig(tempDataDir(t), database);
  const app = Fastify(serverOptions(config, { level: 'info', stream }));
  t.teardown(() => app.close());
  await app.register(blogApp, { config, bootstrap: { onKey() {} } });
  await app.ready();
  const siteId = (await app.sites.list())[0]!.id;
  await app.accounts.addMember(siteId, 'target@example.com', 'owner', PASSWORD);
  await app.accounts.addMember(siteId, 'other@example.com', 'owner', PASSWORD);
  const attempt = (email: string, password: string, ip = '203.0.113.7') =>
    app.inject({ method: 'POST', url: '/api/v1/auth/sign-in', remoteAddress: ip, payload: { email, password } });

  for (let i = 0; i < 5; i++) t.equal((await attempt('target@example.com', `wrong password ${i}`)).statusCode, 401);
  const limited = await attempt('target@example.com', PASSWORD);
  t.equal(limited.statusCode, 429, 'even the right password waits');
  t.equal(limited.json().error.code, 'RATE_LIMITED');
  const retryAfter = Number(limited.headers['retry-after']);
  t.ok(retryAfter > 0 && retryAfter <= 900, `Retry-After ${retryAfter}`);
  t.equal((await attempt('TARGET@example.com', PASSWORD, '198.51.100.9')).statusCode, 429, 'per email, from any address, in any case');
  t.equal((await attempt('other@example.com', PASSWORD, '198.51.100.9')).statusCode, 200, 'another email is not held back');

  const log = lines.join('');
  t.match(log, /sign-in failed/);
  t.match(log, /sign-in refused: too many failures/);
  t.match(log, /target@example\.com/);
  t.notMatch(log, /wrong password/, 'no password in the log');
  t.notMatch(log, new RegExp(PASSWORD), 'not the right one either');
});

t.test('20 failures from one address: 429 for any email from it', async (t) => {
  const ctx = await buildTestApp(t);
  await addUser(ctx, 'someone@example.com', 'editor');
  const attempt = (email: string, ip = '203.0.113.50') =>
    ctx.app.inject({ method: 'POST', url: '/api/v1/auth/sign-in', remoteAddress: ip, payload: { email, password: 'guess guess guess' } });
  for (let i = 0; i < 20; i++) t.equal((await attempt(`guess${i}@example.com`)).statusCode, 401);
  const limited = await attempt('someone@example.com');
  t.equal(limited.statusCode, 429);
  t.ok(Number(limited.headers['retry-after']) > 0);
  t.equal((await attempt('someone@example.com', '203.0.113.51')).statusCode, 401, 'another address still gets an answer');
});

t.test('the throttle window slides; a success clears the email', (t) => {
  let now = 1_000_000;
  const throttle = new SignInThrottle({ perEmail: 5, perAddress: 20, windowMs: 15 * 60_000 }, () => now);
  for (let i = 0; i < 5; i++) {
    t.equal(throttle.retryAfter('a@x.io', 'ip'), 0);
    throttle.fail('a@x.io', 'ip');
    now += 60_000;
  }
  // The first failure was 5 minutes ago: it leaves the window 10 minutes from now.
  t.equal(throttle.retryAfter('a@x.io', 'ip'), 600);
  now += 600_000;
  t.equal(throttle.retryAfter('a@x.io', 'ip'), 0, 'one failure left the window');
  throttle.fail('a@x.io', 'ip');
  t.ok(throttle.retryAfter('a@x.io', 'ip') > 0);
  throttle.succeed('a@x.io');
  t.equal(throttle.retryAfter('a@x.io', 'other ip'), 0);
  t.end();
});

t.test('sessions end when idle too long or past their absolute lifetime', (t) => {
  const lifetimes = { idleMs: 7 * DAY_MS, maxMs: 30 * DAY_MS };
  const start = Date.UTC(2026, 0, 1);
  const row = (lastSeen: number) => ({
    id: 's',
    tokenHash: 'h',
    userId: 'u',
    siteId: 'x',
    createdAt: new Date(start),
    lastSeenAt: new Date(lastSeen),
    expiresAt: new Date(start + lifetimes.maxMs),
  });
  t.ok(sessionAlive(row(start), start + 7 * DAY_MS - 1, lifetimes), 'just within the idle timeout');
  t.notOk(sessionAlive(row(start), start + 7 * DAY_MS, lifetimes), 'idle for 7 days');
  t.ok(sessionAlive(row(start + 25 * DAY_MS), start + 29 * DAY_MS, lifetimes), 'active: it slides');
  t.notOk(sessionAlive(row(start + 30 * DAY_MS - HOUR_MS), start + 30 * DAY_MS, lifetimes), 'but never past 30 days');
  t.end();
});
