import { api, query } from './api.js';
import { busy, confirmedAction, field, h, heading, link, messageLine, poll, replace, select, when } from './ui.js';
import { LENGTHS, STYLES, TONES, generationOptions } from './options.js';

const POLL_MS = 1000;
const FINAL = new Set(['succeeded', 'failed', 'cancelled']);
const STATE_TEXT = { pending: 'Pending', running: 'Running', succeeded: 'Done', failed: 'Failed', cancelled: 'Cancelled' };
const PUBLISH = [['DRAFT', 'Drafts'], ['UNLISTED', 'Unlisted'], ['PUBLISHED', 'Published']];

/** A datetime-local value as an RFC 3339 instant in the browser's zone, or undefined. */
const instant = (input) => (input.value ? new Date(input.value).toISOString() : undefined);

export async function render(main, ctx) {
  ctx.setTitle('Batches');
  const topics = h('textarea', { rows: 6, required: true });
  const controls = {
    style: select(STYLES, ''),
    length: select(LENGTHS, ''),
    tone: select(TONES, ''),
    audience: h('input', { type: 'text', maxlength: 200 }),
    examples: h('input', { type: 'checkbox', id: 'batch-examples' }),
  };
  const status = select(PUBLISH, 'DRAFT');
  const category = h('input', { type: 'text', maxlength: 100 });
  const start = h('input', { type: 'datetime-local' });
  const end = h('input', { type: 'datetime-local' });
  const button = h('button', { type: 'submit' }, 'Schedule');
  const message = messageLine();
  const form = h(
    'form',
    { class: 'card' },
    field('Topics', topics, 'One per line, up to 100.'),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Defaults for every post'),
      h('div', { class: 'grid' }, field('Style', controls.style), field('Length', controls.length), field('Tone', controls.tone), field('Audience', controls.audience), field('Category', category), field('Posts become', status)),
      h('div', { class: 'check' }, controls.examples, h('label', { for: 'batch-examples' }, 'Include examples')),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'When (optional)'),
      h('p', { class: 'hint' }, 'Posts are spread evenly between the two dates; without them they are written now.'),
      h('div', { class: 'grid' }, field('Start', start), field('End', end)),
    ),
    message.el,
    h('div', { class: 'actions' }, button),
  );
  const progress = h('section', { 'aria-labelledby': 'progress-heading', hidden: true });
  const recent = h('div');
  main.append(heading('Batches'), form, progress, h('h2', {}, 'Recent tasks'), recent);

  let stop = null;
  const stopWatching = () => {
    if (stop) stop();
    stop = null;
  };

  function taskRow(task, refresh) {
    let cancel = null;
    if (task.status === 'pending') {
      cancel = h('button', { type: 'button', class: 'secondary small', 'aria-label': `Cancel “${task.topic}”` }, 'Cancel');
      confirmedAction(cancel, { question: `Cancel the post “${task.topic}”?`, action: 'Cancel task' }, async () => {
        await api('DELETE', `/tasks/${encodeURIComponent(task.id)}`);
        await refresh();
      }, message);
    }
    return h(
      'li',
      { class: 'row', 'data-status': task.status },
      h('p', { class: 'row-title' }, task.topic),
      h(
        'p',
        { class: 'meta' },
        h('span', { class: `badge ${task.status}` }, STATE_TEXT[task.status] || task.status),
        ` ${task.status === 'pending' ? `due ${when(task.scheduledFor)}` : when(task.finishedAt || task.startedAt || task.scheduledFor)}`,
        task.postId ? [' · ', link(`/admin/posts/${encodeURIComponent(task.postId)}`, 'Open post')] : '',
      ),
      task.lastError ? h('p', { class: 'message error' }, task.lastError) : null,
      // The writer's notes (staff only): an outline is kept as a draft for a person to write.
      task.keptAsDraft ? h('p', { class: 'meta' }, 'Kept as a draft: no document covered the topic, so the writer made an outline, not a post.') : null,
      task.notes && task.notes.length ? h('p', { class: 'meta' }, task.notes.join(' ')) : null,
      cancel ? h('div', { class: 'actions' }, cancel) : null,
    );
  }

  /** The batch shown with its progress: its tasks are listed there, once, not again under "Recent tasks". */
  let shownBatch = null;

  async function showBatch(batchId) {
    stopWatching();
    shownBatch = batchId;
    progress.hidden = false;
    const bar = h('div', { class: 'bar', role: 'progressbar', 'aria-labelledby': 'progress-heading', 'aria-valuemin': '0', 'aria-valuemax': '1', 'aria-valuenow': '0' }, h('div', { class: 'fill' }));
    const counts = h('p', { class: 'meta' });
    const tasks = h('ul', { class: 'rows' });
    replace(progress, h('h2', { id: 'progress-heading' }, 'Batch progress'), bar, counts, tasks);
    const refresh = async () => {
      const data = await api('GET', `/tasks${query({ batchId, limit: 100 })}`);
      const total = data.pagination.total;
      const done = data.tasks.filter((task) => FINAL.has(task.status)).length;
      bar.setAttribute('aria-valuemax', String(total));
      bar.setAttribute('aria-valuenow', String(done));
      bar.setAttribute('aria-valuetext', `${done} of ${total} done`);
      bar.firstChild.style.width = `${total ? (100 * done) / total : 0}%`;
      const failed = data.tasks.filter((task) => task.status === 'failed').length;
      counts.textContent = `${done} of ${total} done${failed ? `, ${failed} failed` : ''}`;
      replace(tasks, data.tasks.map((task) => taskRow(task, refresh)));
      // The other tasks move too: their states stay live beside the batch's.
      void loadRecent().catch(() => {});
      return done < total;
    };
    if (await refresh()) {
      stop = poll(async () => {
        const again = await refresh();
        if (!again) {
          stop = null;
          loadRecent();
        }
        return again;
      }, POLL_MS);
    }
  }

  async function loadRecent() {
    const data = await api('GET', `/tasks${query({ limit: 20 })}`);
    const others = data.tasks.filter((task) => task.batchId !== shownBatch);
    if (others.length === 0) return replace(recent, h('p', { class: 'muted' }, shownBatch ? 'No other tasks.' : 'No tasks yet.'));
    replace(recent, h('ul', { class: 'rows' }, others.map((task) => taskRow(task, loadRecent))));
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.clear();
    const lines = topics.value.split('\n').map((line) => line.trim()).filter(Boolean);
    if (lines.length === 0) {
      message.error('Write at least one topic, one per line.');
      return topics.focus();
    }
    const defaults = { ...generationOptions(controls), status: status.value };
    if (category.value.trim()) defaults.category = category.value.trim();
    const body = { posts: lines.map((topic) => ({ topic })), defaults, startDate: instant(start), endDate: instant(end) };
    try {
      const data = await busy(button, () => api('POST', '/posts/batch', body), 'Scheduling…');
      message.ok(data.message);
      topics.value = '';
      history.replaceState(null, '', `/admin/batches${query({ batch: data.batchId })}`);
      await showBatch(data.batchId);
      loadRecent();
    } catch (error) {
      message.error(error);
    }
  });

  const batch = ctx.search.get('batch');
  await Promise.all([batch ? showBatch(batch) : null, loadRecent()]);
  return stopWatching;
}
