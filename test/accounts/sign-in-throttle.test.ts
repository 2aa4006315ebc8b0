import t from 'tap';
import { SignInThrottle, sessionAlive, DAY_MS, HOUR_MS } from '../../src/accounts/rules.js';
import { buildTestApp, loggedApp } from '../helpers/app.js';
import { PASSWORD, addUser } from '../helpers/accounts.js';
import { passwordHashGate } from '../../src/accounts/passwords.js';

t.test('5 failures for one email from one address in 15 minutes: 429 with Retry-After, logged without the password', async (t) => {
  const { app, text } = await loggedApp(t);
  const siteId = (await app.sites.list())[0]!.id;
  await app.accounts.addMember(siteId, 'target@example.com', 'owner', PASSWORD);
  await app.accounts.addMember(siteId, 'other@example.com', 'owner', PASSWORD);
  const attempt = (email: string, password: string, ip = '203.0.113.7') =>
    app.inject({ method: 'POST', url: '/api/v1/auth/sign-in', remoteAddress: ip, payload: { email, password } });

  for (let i = 0; i < 5; i++) t.equal((await attempt('target@example.com', `wrong password ${i}`)).statusCode, 401);
  const limited = await attempt('target@example.com', PASSWORD);
  t.equal(limited.statusCode, 429, 'even the right password waits, from that address');
  t.equal(limited.json().error.code, 'RATE_LIMITED');
  const retryAfter = Number(limited.headers['retry-after']);
  t.ok(retryAfter > 0 && retryAfter <= 900, `Retry-After ${retryAfter}`);
  t.equal((await attempt('TARGET@example.com', 'wrong again')).statusCode, 429, 'in any case');
  t.equal((await attempt('other@example.com', PASSWORD)).statusCode, 200, 'another email from that address is not held back');

  const log = text();
  t.match(log, /sign-in failed/);
  t.match(log, /sign-in refused: too many failures/);
  t.match(log, /target@example\.com/);
  t.notMatch(log, /wrong password/, 'no password in the log');
  t.notMatch(log, new RegExp(PASSWORD), 'not the right one either');
});

t.test("a stranger's failures do not lock the owner out: the right password from a clean address signs in", async (t) => {
  const ctx = await buildTestApp(t);
  await addUser(ctx, 'owner@example.com', 'owner');
  const attempt = (password: string, ip: string) =>
    ctx.app.inject({ method: 'POST', url: '/api/v1/auth/sign-in', remoteAddress: ip, payload: { email: 'owner@example.com', password } });
  // A stranger spends the budget of three addresses on the owner's email.
  for (const ip of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
    for (let i = 0; i < 5; i++) t.equal((await attempt(`guess ${i}`, ip)).statusCode, 401);
    t.equal((await attempt(`guess more`, ip)).statusCode, 429, `${ip} is held back`);
  }
  t.equal((await attempt(PASSWORD, '198.51.100.20')).statusCode, 200, 'the owner, from their own address, signs in');
  t.equal((await attempt('a wrong one', '198.51.100.20')).statusCode, 401, "and their address's budget is intact");
});

t.test('15 wrong passwords at the same moment for one email: the attempts past the limit are refused', async (t) => {
  const ctx = await buildTestApp(t);
  await addUser(ctx, 'target@example.com', 'owner');
  const answers = await Promise.all(
    Array.from({ length: 15 }, (_, i) =>
      ctx.app.inject({ method: 'POST', url: '/api/v1/auth/sign-in', remoteAddress: '203.0.113.9', payload: { email: 'target@example.com', password: `wrong password ${i}` } }),
    ),
  );
  const statuses = answers.map((a) => a.statusCode);
  t.equal(statuses.filter((s) => s === 401).length, 5, `5 passwords checked (${statuses.join(' ')})`);
  t.equal(statuses.filter((s) => s === 429).length, 10, 'the other 10 refused unchecked');
  t.ok(answers.filter((a) => a.statusCode === 429).every((a) => Number(a.headers['retry-after']) > 0), 'with Retry-After');
});

t.test('the looser limit on an email alone holds back a guesser spread over many addresses', async (t) => {
  const ctx = await buildTestApp(t);
  await addUser(ctx, 'target@example.com', 'owner');
  const attempt = (i: number, password = `guess ${i}`) =>
    ctx.app.inject({ method: 'POST', url: '/api/v1/auth/sign-in', remoteAddress: `10.0.${Math.floor(i / 200)}.${i % 200}`, payload: { email: 'target@example.com', password } });
  // Two guesses from each of 25 addresses: 50 for the email.
  for (let i = 0; i < 50; i++) t.equal((await attempt(Math.floor(i / 2))).statusCode, 401);
  t.equal((await attempt(900, PASSWORD)).statusCode, 429, 'past 50 for the email, any address waits');
});

t.test('at most 2 password hashes at once in the process: past the queue, 429 with Retry-After', async (t) => {
  const ctx = await buildTestApp(t);
  passwordHashGate.peak = 0;
  // From 60 addresses, 60 emails: no throttle limit applies, only the hashing queue's.
  const answers = await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      ctx.app.inject({ method: 'POST', url: '/api/v1/auth/sign-in', remoteAddress: `192.0.2.${i + 1}`, payload: { email: `burst${i}@example.com`, password: 'guess guess guess' } }),
    ),
  );
  const statuses = answers.map((a) => a.statusCode);
  const busy = answers.filter((a) => a.statusCode === 429);
  // Two checked at once and 32 waiting: about 34 answered (one more when one finished before the last arrived).
  t.equal(statuses.filter((s) => s === 401).length + busy.length, 60, `checked or refused (${statuses.join(' ')})`);
  t.ok(busy.length >= 20, `${busy.length} refused at once, without waiting`);
  t.ok(busy.every((a) => a.headers['retry-after'] === '1' && a.json().error.code === 'RATE_LIMITED'), 'with Retry-After: 1');
  t.ok(passwordHashGate.peak <= 2, `peak ${passwordHashGate.peak} hashes at once`);
  // A refused attempt was not counted: from the same address, the same email gets its answer.
  const refused = answers.findIndex((a) => a.statusCode === 429);
  const again = await ctx.app.inject({ method: 'POST', url: '/api/v1/auth/sign-in', remoteAddress: `192.0.2.${refused + 1}`, payload: { email: `burst${refused}@example.com`, password: 'guess guess guess' } });
  t.equal(again.statusCode, 401);
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

t.test('the throttle window slides; an attempt counts as it begins; a success takes it back and clears the email at that address', (t) => {
  let now = 1_000_000;
  const throttle = new SignInThrottle({ perEmailAddress: 5, perEmail: 50, perAddress: 20, windowMs: 15 * 60_000 }, () => now);
  for (let i = 0; i < 5; i++) {
    t.equal(throttle.retryAfter('a@x.io', 'ip'), 0);
    t.ok(throttle.begin('a@x.io', 'ip').attempt, 'counted at once');
    now += 60_000;
  }
  // The first attempt was 5 minutes ago: it leaves the window 10 minutes from now.
  t.equal(throttle.retryAfter('a@x.io', 'ip'), 600);
  t.equal(throttle.begin('a@x.io', 'ip').retryAfter, 600, 'refused, not counted');
  t.equal(throttle.retryAfter('a@x.io', 'other ip'), 0, 'another address may try');
  now += 600_000;
  t.equal(throttle.retryAfter('a@x.io', 'ip'), 0, 'one attempt left the window');
  const { attempt } = throttle.begin('a@x.io', 'ip');
  t.ok(throttle.retryAfter('a@x.io', 'ip') > 0, 'the attempt in flight counts');
  attempt!.succeed();
  t.equal(throttle.retryAfter('a@x.io', 'ip'), 0, 'a right password clears the email at that address');
  const cancelled = throttle.begin('b@x.io', 'ip2').attempt!;
  cancelled.cancel();
  cancelled.succeed();
  t.equal(throttle.retryAfter('b@x.io', 'ip2'), 0);
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
