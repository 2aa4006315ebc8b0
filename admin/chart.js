// Charts of stats: an SVG drawn with DOM calls (no inline style: the CSP forbids it; colours come
// from admin.css classes), with the same numbers as a table for screen readers and copying.
import { api, query } from './api.js';
import { h } from './ui.js';

const SVG = 'http://www.w3.org/2000/svg';

function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs || {})) el.setAttribute(name, String(value));
  for (const child of children) el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return el;
}

/** The lines of a chart: the field of each day, its label, and its style (the views' or the visitors'). */
const SERIES = [
  ['views', 'Views', 'views'],
  ['visitors', 'Visitors', 'visitors'],
];

/** A round upper bound for the axis. */
function ceiling(max) {
  if (max <= 4) return 4;
  const step = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * step >= max) return m * step;
  return 10 * step;
}

/**
 * A line chart of views and visitors per day (`days`: [{ day, views, visitors }]), and their
 * table. `small`: the editor's sparkline size, table still there. `series` draws other fields
 * (the first one is totalled in the chart's title, in `unit`s).
 */
export function dayChart(days, { title = 'Views and visitors per day', small = false, series = SERIES, unit = 'view' } = {}) {
  const width = small ? 320 : 720;
  const height = small ? 90 : 240;
  const pad = { left: small ? 4 : 40, right: 8, top: 10, bottom: small ? 6 : 24 };
  const max = ceiling(Math.max(0, ...days.flatMap((d) => series.map(([key]) => d[key]))));
  const x = (i) => pad.left + (days.length <= 1 ? 0 : (i * (width - pad.left - pad.right)) / (days.length - 1));
  const y = (v) => height - pad.bottom - (v * (height - pad.top - pad.bottom)) / max;
  const total = days.reduce((n, d) => n + d[series[0][0]], 0);
  const titleId = `chart-${Math.random().toString(36).slice(2)}`;

  const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, class: `chart${small ? ' small' : ''}`, role: 'img', 'aria-labelledby': titleId });
  svg.append(s('title', { id: titleId }, `${title}: ${total} ${unit}${total === 1 ? '' : 's'} over ${days.length} day${days.length === 1 ? '' : 's'}`));
  if (!small) {
    for (const v of [0, max / 2, max]) {
      svg.append(s('line', { x1: pad.left, x2: width - pad.right, y1: y(v), y2: y(v), class: 'grid' }));
      svg.append(s('text', { x: pad.left - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' }, String(v)));
    }
    if (days.length > 0) {
      svg.append(s('text', { x: pad.left, y: height - 6, class: 'axis' }, days[0].day));
      svg.append(s('text', { x: width - pad.right, y: height - 6, 'text-anchor': 'end', class: 'axis' }, days[days.length - 1].day));
    }
  }
  for (const [key, , style] of series) {
    const points = days.map((d, i) => `${x(i).toFixed(1)},${y(d[key]).toFixed(1)}`).join(' ');
    svg.append(s('polyline', { points, class: `series ${style}` }));
  }

  const legend = h('p', { class: 'legend' }, series.map(([, label, style]) => h('span', { class: `key ${style}` }, label)));
  const table = h(
    'table',
    { class: 'numbers' },
    h('caption', {}, title),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Day'), series.map(([, label]) => h('th', { scope: 'col' }, label)))),
    h(
      'tbody',
      {},
      days.map((d) => h('tr', {}, h('th', { scope: 'row' }, d.day), series.map(([key]) => h('td', {}, String(d[key]))))),
    ),
  );
  return h('figure', { class: 'stats-chart' }, svg, legend, h('details', {}, h('summary', {}, 'Numbers as a table'), table));
}

/** The small chart of one post's last 30 days (the editor shows it); nothing for a new post. */
export async function postChart(postId) {
  const data = await api('GET', `/posts/${encodeURIComponent(postId)}/stats`);
  return h('section', { class: 'post-stats', 'aria-label': 'Views' }, h('h2', {}, `Views, last ${data.days.length} days: ${data.totals.views}`), dayChart(data.days, { title: 'This post per day', small: true }));
}

/** Fills each `[data-views]` element under `container` with its post's views of the last 30 days. */
export async function fillViews(container) {
  const spots = [...container.querySelectorAll('[data-views]')];
  if (spots.length === 0) return;
  try {
    const data = await api('GET', `/stats/posts${query({ ids: spots.map((el) => el.dataset.views).join(',') })}`);
    const byId = new Map(data.posts.map((p) => [p.postId, p.views]));
    for (const el of spots) el.textContent = ` · ${byId.get(el.dataset.views) ?? 0} views (30 days)`;
  } catch {
    // Stats are extra: the list stands without them.
  }
}
