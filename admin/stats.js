// The stats screen: views and visitors per day (chart and table), top posts, pages and referrers,
// counted on the server from reads of the public pages.
import { api, query } from './api.js';
import { dayChart } from './chart.js';
import { field, h, heading, link, replace, select } from './ui.js';

const RANGES = [
  ['7', 'Last 7 days'],
  ['30', 'Last 30 days'],
  ['90', 'Last 90 days'],
  ['365', 'Last 365 days'],
];

const addDays = (day, n) => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

function topTable(caption, columns, rows) {
  if (rows.length === 0) return h('section', {}, h('h2', {}, caption), h('p', { class: 'muted' }, 'Nothing counted yet.'));
  return h(
    'section',
    {},
    h('h2', {}, caption),
    h(
      'table',
      { class: 'numbers' },
      h('thead', {}, h('tr', {}, columns.map(([label]) => h('th', { scope: 'col' }, label)))),
      h('tbody', {}, rows.map((row) => h('tr', {}, columns.map(([, cell]) => h('td', {}, cell(row)))))),
    ),
  );
}

export async function render(main, ctx) {
  ctx.setTitle('Stats');
  const range = RANGES.some(([v]) => v === ctx.search.get('days')) ? ctx.search.get('days') : '30';
  const rangeSelect = select(RANGES, range, { name: 'days' });
  rangeSelect.addEventListener('change', () => ctx.navigate(`/admin/stats${query({ days: rangeSelect.value })}`));
  const body = h('div', { 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading stats…'));
  main.append(heading('Stats'), h('div', { class: 'filters' }, field('Range', rangeSelect)), body);

  // The last day is today in the site's time zone: the API's default `to`.
  let data = await api('GET', '/stats');
  if (range !== '30') data = await api('GET', `/stats${query({ from: addDays(data.to, -(Number(range) - 1)), to: data.to })}`);
  const subscribers = await api('GET', `/subscribers/stats${query({ from: data.from, to: data.to })}`);
  const direct = (referrer) => (referrer === '' ? 'Direct / internal' : referrer === '(other)' ? 'Other (past the day\'s 500 referrers)' : referrer);
  replace(
    body,
    h('p', { class: 'totals' }, h('strong', {}, String(data.totals.views)), data.totals.views === 1 ? ' view · ' : ' views · ', h('strong', {}, String(data.totals.visitors)), ` daily visitor${data.totals.visitors === 1 ? '' : 's'} · ${data.from} to ${data.to} (${data.timeZone})`),
    dayChart(data.days),
    h(
      'div',
      { class: 'top-lists' },
      topTable(
        'Top posts',
        [
          ['Post', (row) => (row.title ? link(`/admin/posts/${encodeURIComponent(row.postId)}`, row.title) : '(deleted)')],
          ['Views', (row) => String(row.views)],
          ['Visitors', (row) => String(row.visitors)],
        ],
        data.topPosts,
      ),
      topTable(
        'Top pages',
        [
          ['Page', (row) => row.path],
          ['Views', (row) => String(row.views)],
        ],
        data.topPages,
      ),
      topTable(
        'Top referrers',
        [
          ['Referrer', (row) => direct(row.referrer)],
          ['Views', (row) => String(row.views)],
        ],
        data.topReferrers,
      ),
    ),
    h('p', { class: 'hint' }, 'Counted on the server: no cookie, no script. Bots and prefetches are not counted; a visitor is counted once a day.'),
    subscriberSection(subscribers),
  );
}

/** Newsletter subscribers over the same days: sign-ups confirmed and unsubscribes. */
function subscriberSection(data) {
  const joined = data.days.reduce((n, d) => n + d.subscribed, 0);
  const left = data.days.reduce((n, d) => n + d.unsubscribed, 0);
  return h(
    'section',
    {},
    h('h2', {}, 'Subscribers'),
    h('p', { class: 'totals' }, h('strong', {}, String(data.active)), ` active now · ${joined} joined · ${left} left, ${data.from} to ${data.to}`),
    joined || left
      ? dayChart(data.days, {
          title: 'Sign-ups and unsubscribes per day',
          unit: 'sign-up',
          series: [
            ['subscribed', 'Joined', 'views'],
            ['unsubscribed', 'Left', 'visitors'],
          ],
        })
      : h('p', { class: 'muted' }, 'No one joined or left in these days.'),
  );
}
