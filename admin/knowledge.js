import { api, query } from './api.js';
import { busy, confirmedAction, field, fileDrop, h, heading, messageLine, poll, replace, when } from './ui.js';

const ACCEPT = '.txt,.md,.pdf,.doc,.docx,.csv';
const POLL_MS = 1000;
const STATUS_TEXT = { uploaded: 'Indexing…', indexed: 'Indexed', failed: 'Failed' };

export async function render(main, ctx) {
  ctx.setTitle('Knowledge');
  const message = messageLine();
  const input = h('input', { type: 'file', accept: ACCEPT, multiple: true });
  const drop = h(
    'div',
    { class: 'drop' },
    field('Upload a file', input, 'Text, Markdown, PDF, Word or CSV, up to 10 MB. Or drop files here.'),
  );
  const list = h('div', { 'aria-live': 'polite' });
  const searchBox = h('input', { type: 'search', required: true, maxlength: 500 });
  const searchButton = h('button', { type: 'submit', class: 'secondary' }, 'Search');
  const results = h('div', { 'aria-live': 'polite' });
  const searchForm = h('form', { class: 'filters', role: 'search', 'aria-label': 'Try retrieval' }, field('Search the knowledge', searchBox), h('div', { class: 'actions' }, searchButton));

  main.append(
    heading('Knowledge'),
    h('p', {}, 'Files the generator draws on: each is split into passages and indexed for retrieval.'),
    drop,
    message.el,
    h('h2', {}, 'Files'),
    list,
    h('h2', {}, 'Try retrieval'),
    searchForm,
    results,
  );

  let items = [];
  // Names of files uploaded here and not yet indexed: the upload notice gives way to their state.
  const announced = new Set();
  async function load() {
    const data = await api('GET', `/knowledge${query({ limit: 100 })}`);
    items = data.items;
    draw();
    for (const item of items) {
      if (item.status !== 'uploaded' && announced.delete(item.name)) {
        if (item.status === 'indexed') message.ok(`${item.name} is indexed: ${item.chunkCount} passage${item.chunkCount === 1 ? '' : 's'}.`);
        else message.error(new Error(`${item.name} could not be indexed${item.error ? `: ${item.error}` : '.'}`));
      }
    }
    return items.some((item) => item.status === 'uploaded');
  }

  function draw() {
    if (items.length === 0) return replace(list, h('p', { class: 'muted' }, 'No files yet.'));
    replace(
      list,
      h(
        'ul',
        { class: 'rows' },
        items.map((item) => {
          const remove = h('button', { type: 'button', class: 'danger small', 'aria-label': `Delete ${item.name}` }, 'Delete');
          confirmedAction(remove, { question: `Delete “${item.name}” and its index?` }, async () => {
            await api('DELETE', `/knowledge/${encodeURIComponent(item.id)}`);
            message.ok(`Deleted ${item.name}.`);
            await load();
          }, message);
          return h(
            'li',
            { class: 'row', 'data-status': item.status },
            h('p', { class: 'row-title' }, h('strong', {}, item.name)),
            h(
              'p',
              { class: 'meta' },
              h('span', { class: `badge ${item.status}` }, STATUS_TEXT[item.status] || item.status),
              ` ${item.size} · ${item.type} · ${item.status === 'indexed' ? `${item.chunkCount} passages · ` : ''}${when(item.lastUpdated)}`,
            ),
            item.status === 'failed' && item.error ? h('p', { class: 'message error' }, item.error) : null,
            h('div', { class: 'actions' }, remove),
          );
        }),
      ),
    );
  }

  let stopPolling = null;
  function watch(pending) {
    if (!pending || stopPolling) return;
    stopPolling = poll(async () => {
      const again = await load();
      if (!again) stopPolling = null;
      return again;
    }, POLL_MS);
  }

  async function upload(files) {
    message.clear();
    for (const file of files) {
      const form = new FormData();
      form.append('file', file, file.name);
      try {
        message.ok(`Uploading ${file.name}…`);
        await api('POST', '/knowledge', form);
        message.ok(`Uploaded ${file.name}: indexing.`);
        announced.add(file.name);
      } catch (error) {
        message.error(new Error(`${file.name}: ${error.message}`));
      }
    }
    input.value = '';
    watch(await load());
  }

  fileDrop(drop, input, upload);

  searchForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const q = searchBox.value.trim();
    if (!q) return;
    try {
      const data = await busy(searchButton, () => api('GET', `/knowledge/search${query({ q, limit: 10 })}`), 'Searching…');
      // A passage scored 0 matched nothing that counts: not a result.
      data.results = data.results.filter((hit) => hit.score > 0);
      if (data.results.length === 0) return replace(results, h('p', { class: 'muted' }, 'No passage matches: try other words, or fewer of them.'));
      replace(
        results,
        h(
          'ol',
          { class: 'rows' },
          data.results.map((hit) => h('li', { class: 'row' }, h('p', { class: 'meta' }, `${hit.fileName} · score ${hit.score.toFixed(3)}`), h('p', { class: 'passage' }, hit.text))),
        ),
      );
    } catch (error) {
      replace(results, h('p', { class: 'message error', role: 'alert' }, error.message));
    }
  });

  watch(await load());
  return () => stopPolling && stopPolling();
}
