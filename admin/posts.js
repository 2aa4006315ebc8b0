import { api, query } from './api.js';
import { fillViews } from './chart.js';
import { field, h, heading, link, pager, replace, select, when } from './ui.js';

const STATUSES = [
  ['', 'Drafts and published'],
  ['draft', 'Drafts'],
  ['scheduled', 'Scheduled'],
  ['published', 'Published'],
  ['unlisted', 'Unlisted'],
  ['all', 'All'],
];
const PAGE_SIZE = 20;

export function statusText(post) {
  if (post.isDraft) return post.publishAt ? `Scheduled for ${when(post.publishAt)}` : 'Draft';
  return post.visibility === 'unlisted' ? 'Unlisted' : 'Published';
}

export async function render(main, ctx) {
  ctx.setTitle('Posts');
  const status = ctx.search.get('status') || '';
  const q = ctx.search.get('q') || '';
  const page = Math.max(1, Number(ctx.search.get('page')) || 1);

  const statusSelect = select(STATUSES, status, { name: 'status' });
  const search = h('input', { type: 'search', name: 'q', value: q, maxlength: 200 });
  const filters = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter posts' },
    field('Status', statusSelect),
    field('Search', search),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'secondary' }, 'Filter')),
  );
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    ctx.navigate(`/admin/posts${query({ status: statusSelect.value, q: search.value.trim() })}`);
  });
  statusSelect.addEventListener('change', () => filters.requestSubmit());

  const list = h('div', { 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading posts…'));
  main.append(
    h('div', { class: 'title-row' }, heading('Posts'), h('div', { class: 'actions' }, link('/admin/posts/new', 'New post', { class: 'button' }), link('/admin/generate', 'Generate', { class: 'button secondary' }))),
    filters,
    list,
  );

  const data = await api('GET', `/posts${query({ status, q, page, limit: PAGE_SIZE })}`);
  if (data.posts.length === 0) {
    replace(list, h('p', { class: 'muted' }, q || status ? 'No post matches.' : 'No posts yet. Write one, or generate one.'));
    return;
  }
  replace(
    list,
    h('p', { class: 'muted' }, `${data.pagination.total} post${data.pagination.total === 1 ? '' : 's'}`),
    h(
      'ul',
      { class: 'rows' },
      data.posts.map((post) =>
        h(
          'li',
          { class: 'row' },
          h('h2', { class: 'row-title' }, link(`/admin/posts/${encodeURIComponent(post.id)}`, post.title)),
          h(
            'p',
            { class: 'meta' },
            h('span', { class: `badge ${post.isDraft ? 'draft' : 'live'}` }, statusText(post)),
            ` Updated ${when(post.updatedAt)}`,
            post.category ? ` · ${post.category}` : '',
            post.tags.length ? ` · ${post.tags.join(', ')}` : '',
            h('span', { class: 'views', 'data-views': post.id }),
          ),
        ),
      ),
    ),
    pager(data.pagination, (n) => `/admin/posts${query({ status, q, page: n })}`),
  );
  void fillViews(list);
}
