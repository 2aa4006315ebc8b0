import { api, query } from './api.js';
import { busy, confirmedAction, field, h, heading, link, messageLine, pager, replace, select, when } from './ui.js';

const STATUSES = [
  ['', 'Every status'],
  ['active', 'Active'],
  ['pending', 'Waiting for confirmation'],
  ['unsubscribed', 'Unsubscribed'],
  ['bouncing', 'Bouncing'],
];
const LABELS = { active: 'Active', pending: 'Pending', unsubscribed: 'Unsubscribed', bouncing: 'Bouncing' };
const PAGE_SIZE = 50;
const SOURCES = { form: 'by the form', api: 'by the content API', import: 'imported' };

export async function render(main, ctx) {
  ctx.setTitle('Subscribers');
  const status = ctx.search.get('status') || '';
  const q = ctx.search.get('q') || '';
  const page = Math.max(1, Number(ctx.search.get('page')) || 1);
  const here = (changes) => `/admin/subscribers${query({ status, q, ...changes })}`;

  const statusSelect = select(STATUSES, status, { name: 'status' });
  const search = h('input', { type: 'search', name: 'q', value: q, maxlength: 200 });
  const filters = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter subscribers' },
    field('Status', statusSelect),
    field('Search', search),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'secondary' }, 'Filter')),
  );
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    ctx.navigate(`/admin/subscribers${query({ status: statusSelect.value, q: search.value.trim() })}`);
  });
  statusSelect.addEventListener('change', () => filters.requestSubmit());

  // Import: a CSV whose column "email" (or first column) holds the addresses.
  const file = h('input', { type: 'file', accept: '.csv,text/csv', required: true });
  const consent = h('input', { type: 'checkbox', id: 'import-consent', required: true });
  const importButton = h('button', { type: 'submit' }, 'Import');
  const importMessage = messageLine();
  const problems = h('div');
  const importForm = h(
    'form',
    { class: 'card' },
    h('h2', {}, 'Import'),
    field('CSV file', file, 'A column named "email", or the addresses in the first column.'),
    h('div', { class: 'check' }, consent, h('label', { for: 'import-consent' }, 'These people agreed to receive the newsletter')),
    importMessage.el,
    problems,
    h('div', { class: 'actions' }, importButton, h('a', { href: '/api/v1/subscribers.csv', class: 'button secondary', download: 'subscribers.csv' }, 'Export CSV')),
  );
  importForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    importMessage.clear();
    replace(problems);
    if (!file.files.length) return importMessage.error('Choose a CSV file.');
    if (!consent.checked) return importMessage.error('Import only people who agreed to receive it.');
    const body = new FormData();
    body.append('file', file.files[0]);
    try {
      const data = await busy(importButton, () => api('POST', `/subscribers/import`, body), 'Importing…');
      importMessage.ok(data.message);
      if (data.problems.length) {
        replace(problems, h('p', {}, `${data.problems.length} line${data.problems.length === 1 ? '' : 's'} skipped:`), h('ul', { class: 'problems' }, data.problems.slice(0, 100).map((problem) => h('li', {}, `Line ${problem.line}: ${problem.email ?? ''} (${problem.reason})`))));
      }
      file.value = '';
      consent.checked = false;
      await load();
    } catch (error) {
      importMessage.error(error);
    }
  });

  const counts = h('p', { class: 'counts', 'aria-live': 'polite' });
  const message = messageLine();
  const list = h('div', { 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading subscribers…'));
  main.append(heading('Subscribers'), h('p', {}, 'Readers who get new posts by email. Turn the newsletter on, and set its sender, under ', link('/admin/settings', 'Settings'), '.'), counts, filters, message.el, list, importForm);

  async function load() {
    const data = await api('GET', `/subscribers${query({ status, q, page, limit: PAGE_SIZE })}`);
    replace(counts, Object.entries(LABELS).map(([key, label], i) => [i ? ' · ' : '', h('span', { 'data-count': key }, `${label}: ${data.counts[key]}`)]).flat());
    if (data.subscribers.length === 0) {
      replace(list, h('p', { class: 'muted' }, q || status ? 'No subscriber matches.' : 'No subscribers yet. Readers subscribe on the site’s pages; you can also import a list.'));
      return;
    }
    replace(
      list,
      h(
        'ul',
        { class: 'rows' },
        data.subscribers.map((subscriber) => {
          const remove = h('button', { type: 'button', class: 'danger small' }, 'Remove');
          confirmedAction(remove, { question: `Erase ${subscriber.email}? The address is deleted, not kept as unsubscribed.`, action: 'Remove' }, async () => {
            await api('DELETE', `/subscribers/${encodeURIComponent(subscriber.id)}`);
            message.ok(`${subscriber.email} erased.`);
            await load();
          }, message);
          return h(
            'li',
            { class: 'row' },
            h('p', { class: 'row-title' }, subscriber.email),
            h('p', { class: 'meta' }, h('span', { class: `badge ${subscriber.status === 'active' ? 'live' : 'draft'}` }, LABELS[subscriber.status] ?? subscriber.status), ` Since ${when(subscriber.createdAt)} · ${SOURCES[subscriber.consentSource] ?? subscriber.consentSource}${subscriber.bounces ? ` · ${subscriber.bounces} bounce${subscriber.bounces === 1 ? '' : 's'}` : ''}`),
            h('div', { class: 'actions' }, remove),
          );
        }),
      ),
      pager(data.pagination, (n) => here({ page: n })),
    );
  }
  await load();
}
