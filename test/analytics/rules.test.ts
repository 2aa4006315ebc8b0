import t from 'tap';
import { dayIn, isReader, lastFinishedDay, referrerOf, statsRange, utmSourceOf } from '../../src/analytics/rules.js';
import { visitorHash } from '../../src/analytics/counter.js';

t.test('referrers: host only, own hosts are direct, utm_source first', async (t) => {
  t.equal(referrerOf('https://News.Example.org:8443/a/b?q=secret#x', null, ['blog.example.com']), 'news.example.org');
  t.equal(referrerOf('https://blog.example.com/other-post/', null, ['blog.example.com']), '');
  t.equal(referrerOf(undefined, null, []), '');
  t.equal(referrerOf('android-app://com.slack/', null, []), '', 'not a web page');
  t.equal(referrerOf('garbage', null, []), '');
  t.equal(referrerOf('https://news.example.org/', ' Newsletter ', []), 'newsletter');
  t.equal(referrerOf(undefined, 'x'.repeat(500), []).length, 100, 'cut');
  t.equal(utmSourceOf('/sites/a/post/?utm_source=mastodon&utm_medium=social'), 'mastodon');
  t.equal(utmSourceOf('/sites/a/post/?q=1'), null);
  t.equal(utmSourceOf('/sites/a/post/'), null);
});

t.test('readers and bots', async (t) => {
  const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
  t.ok(isReader(firefox, undefined));
  t.notOk(isReader(firefox, 'prefetch;prerender'), 'a prefetch');
  t.notOk(isReader(undefined, undefined), 'no agent: a tool');
  for (const bot of ['curl/8.5.0', 'python-requests/2.31', 'facebookexternalhit/1.1', 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)', 'Pingdom.com_bot_version_1.4']) {
    t.notOk(isReader(bot, undefined), bot);
    t.notOk(isReader(bot, undefined), `${bot} (cached verdict)`);
  }
});

t.test('days: time zones, ranges, when a day is over everywhere', async (t) => {
  const at = Date.parse('2026-03-10T23:30:00.000Z');
  t.equal(dayIn('UTC', at), '2026-03-10');
  t.equal(dayIn('Europe/Berlin', at), '2026-03-11');
  t.equal(dayIn('America/Los_Angeles', at), '2026-03-10');
  t.same(statsRange(undefined, undefined, '2026-03-10'), { from: '2026-02-09', to: '2026-03-10' });
  t.same(statsRange('2024-02-29', '2024-02-29', '2026-03-10'), { from: '2024-02-29', to: '2024-02-29' }, 'a leap day');
  t.throws(() => statsRange('2023-02-29', '2023-03-01', '2026-03-10'), { code: 'VALIDATION_ERROR' });
  t.throws(() => statsRange('2026-03-02', '2026-03-01', '2026-03-10'), { code: 'VALIDATION_ERROR' });
  t.same(statsRange('2025-03-10', '2026-03-10', '2026-03-10').from, '2025-03-10', '366 days');
  t.throws(() => statsRange('2025-03-09', '2026-03-10', '2026-03-10'), { code: 'VALIDATION_ERROR' }, '367 days');
  // Day D is over everywhere (UTC-12 too) at D+1 12:00 UTC.
  t.equal(lastFinishedDay(Date.parse('2026-03-11T11:59:59.999Z')), '2026-03-09');
  t.equal(lastFinishedDay(Date.parse('2026-03-11T12:00:00.000Z')), '2026-03-10');
});

t.test('a visitor hash depends on the salt, the site, the address and the agent, and shows none of them', async (t) => {
  const a = visitorHash('salt-1', 'site', '203.0.113.7', 'Agent');
  t.match(a, /^[A-Za-z0-9_-]{22}$/);
  t.equal(visitorHash('salt-1', 'site', '203.0.113.7', 'Agent'), a);
  for (const other of [visitorHash('salt-2', 'site', '203.0.113.7', 'Agent'), visitorHash('salt-1', 'site2', '203.0.113.7', 'Agent'), visitorHash('salt-1', 'site', '203.0.113.8', 'Agent'), visitorHash('salt-1', 'site', '203.0.113.7', 'Agent2')]) {
    t.not(other, a);
  }
});
