import { api } from './api.js';
import { busy, confirmedAction, field, h, heading, link, messageLine, replace, when } from './ui.js';
import { statusText } from './posts.js';
import { featureImagePicker } from './feature-image.js';
import { postChart } from './chart.js';

const PREVIEW_DELAY_MS = 300;

/** An ISO time as a datetime-local input shows it: in the person's own time zone, to the minute. */
const localInput = (iso) => {
  if (!iso) return '';
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const timeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'your time zone';

const tagList = (text) => [...new Set(text.split(',').map((tag) => tag.trim()).filter(Boolean))];
const orNull = (text) => (text.trim() === '' ? null : text);

/** Where readers find a published post: the site's own domain once proven, else this server's /sites/<handle>/. */
function publicUrl(site, post) {
  const slug = encodeURIComponent(post.slug);
  if (site && site.domain && site.domain.status === 'verified' && /^https?:\/\//.test(site.publicUrl)) return `${site.publicUrl.replace(/\/$/, '')}/${slug}/`;
  return `/sites/${encodeURIComponent(site ? site.handle : '')}/${slug}/`;
}

/** /admin/posts/new and /admin/posts/:id: the fields, a live preview, and the actions. */
/** The writer's notes on a post it has just generated (kept by the generate page), shown to the editor only. */
function writerNotes(id) {
  if (!id) return '';
  let generation;
  try {
    generation = JSON.parse(sessionStorage.getItem(`writer-notes:${id}`) || 'null');
  } catch {
    generation = null;
  }
  if (!generation) return '';
  const lines = [...(generation.outline ? ['An outline, not a post: no document covered the topic. It stays a draft until you write it.'] : []), ...(generation.notes || [])];
  return lines.length ? h('div', { class: 'message' }, ...lines.map((line) => h('p', {}, line))) : '';
}

export async function render(main, ctx) {
  const isNew = !ctx.params.id;
  let post = null;
  const [loaded, siteData] = await Promise.all([isNew ? null : api('GET', `/posts/${encodeURIComponent(ctx.params.id)}`), api('GET', '/site').catch(() => null)]);
  const site = siteData ? siteData.site : null;
  if (loaded) post = loaded.post;
  ctx.setTitle(isNew ? 'New post' : `Edit: ${post.title}`);

  const title = h('input', { type: 'text', required: true, maxlength: 300, value: post ? post.title : '' });
  const content = h('textarea', { rows: 16, class: 'content', value: post ? post.content || '' : '' });
  const description = h('textarea', { rows: 2, value: post ? post.description || '' : '' });
  const tags = h('input', { type: 'text', value: post ? post.tags.join(', ') : '' });
  const category = h('input', { type: 'text', value: post ? post.category || '' : '' });
  const publishAt = h('input', { type: 'datetime-local', value: post ? localInput(post.publishAt) : '' });
  const picture = await featureImagePicker(site, post);
  const slug = h('input', { type: 'text', value: post ? post.slug : '', pattern: '[a-z0-9]+(-[a-z0-9]+)*', autocapitalize: 'off', spellcheck: 'false' });

  const slugField = field('Slug', slug, 'The address of the post: a-z, 0-9 and hyphens. A published post’s old address redirects.');
  slugField.hidden = isNew;
  const previewBody = h('div', { class: 'preview-body post-body' });
  const preview = h('section', { class: 'preview', 'aria-labelledby': 'preview-heading' }, h('h2', { id: 'preview-heading' }, 'Preview'), previewBody);

  const message = messageLine();
  const state = h('p', { class: 'meta' });
  const saveDraft = h('button', { type: 'submit', name: 'save' }, 'Save draft');
  const save = h('button', { type: 'submit', name: 'save' }, 'Save');
  const publish = h('button', { type: 'button' }, 'Publish');
  const schedule = h('button', { type: 'button', class: 'secondary' }, 'Schedule');
  const unschedule = h('button', { type: 'button', class: 'secondary' }, 'Cancel schedule');
  const publishAtField = field('Publish at', publishAt, `In your time zone (${timeZone()}); kept in UTC. “Schedule” publishes the draft then.`);
  const unpublish = h('button', { type: 'button', class: 'secondary' }, 'Unpublish');
  const remove = h('button', { type: 'button', class: 'danger' }, 'Delete');
  const actions = h('div', { class: 'actions' });

  function drawState() {
    const live = post && !post.isDraft;
    replace(
      state,
      post ? h('span', { class: `badge ${live ? 'live' : 'draft'}` }, statusText(post)) : h('span', { class: 'badge draft' }, 'New draft'),
      post ? ` Updated ${when(post.updatedAt)}` : '',
      live && post.publishedAt ? ` · Published ${when(post.publishedAt)}` : '',
      live ? [' · ', link(publicUrl(site, post), 'View public page', { class: 'public-link' })] : '',
    );
    publishAtField.hidden = live;
    const scheduled = post && post.isDraft && post.publishAt;
    replace(actions, live ? [save, unpublish] : [saveDraft, publish, schedule, scheduled ? unschedule : null], post ? remove : null);
  }

  const form = h(
    'form',
    { class: 'editor', novalidate: true },
    h(
      'div',
      { class: 'fields' },
      field('Title', title),
      field('Content', content, 'Markdown: # headings, **bold**, [links](https://…), lists, code.'),
      field('Description', description, 'A sentence or two for lists, feeds and search engines.'),
      field('Tags', tags, 'Separated by commas.'),
      field('Category', category),
      picture.el,
      slugField,
      publishAtField,
      message.el,
      actions,
    ),
    preview,
  );

  function fields() {
    const body = { title: title.value.trim(), content: content.value, description: orNull(description.value), tags: tagList(tags.value), category: orNull(category.value.trim()), ...picture.value() };
    if (post && slug.value.trim() && slug.value.trim() !== post.slug) body.slug = slug.value.trim();
    return body;
  }

  /** Creates or updates the post with the fields, and the draft state when given. */
  async function store(isDraft, extra = {}) {
    const body = { ...fields(), ...extra };
    if (!body.title) {
      title.focus();
      throw new Error('A post needs a title.');
    }
    if (isDraft !== undefined) body.isDraft = isDraft;
    if (!post) {
      const created = await api('POST', '/posts', body);
      const full = await api('GET', `/posts/${encodeURIComponent(created.post.id)}`);
      post = full.post;
      history.replaceState(null, '', `/admin/posts/${encodeURIComponent(post.id)}`);
      ctx.setTitle(`Edit: ${post.title}`);
    } else {
      post = (await api('PATCH', `/posts/${encodeURIComponent(post.id)}`, body)).post;
    }
    slug.value = post.slug;
    slugField.hidden = false;
    publishAt.value = localInput(post.publishAt);
    drawState();
  }

  const act = (button, work, busyText, done) => async (event) => {
    if (event) event.preventDefault();
    message.clear();
    try {
      await busy(button, work, busyText);
      message.ok(done());
    } catch (error) {
      message.error(error);
    }
  };

  form.addEventListener('submit', (event) => {
    const button = post && !post.isDraft ? save : saveDraft;
    act(button, () => store(), 'Saving…', () => (post.isDraft ? 'Draft saved.' : 'Saved.'))(event);
  });
  publish.addEventListener('click', act(publish, () => store(false), 'Publishing…', () => 'Published.'));
  schedule.addEventListener(
    'click',
    act(
      schedule,
      () => {
        if (!publishAt.value) {
          publishAt.focus();
          throw new Error('Choose the date and time to publish at.');
        }
        // A datetime-local value is read in the browser's own time zone; the API takes UTC.
        return store(undefined, { publishAt: new Date(publishAt.value).toISOString() });
      },
      'Scheduling…',
      () => `Scheduled for ${when(post.publishAt)}.`,
    ),
  );
  unschedule.addEventListener('click', act(unschedule, () => store(undefined, { publishAt: null }), 'Cancelling…', () => 'Schedule cancelled: a draft again.'));
  unpublish.addEventListener('click', act(unpublish, () => store(true), 'Unpublishing…', () => 'Unpublished: the public page is gone.'));
  // The question names the post's title as saved when the button is pressed.
  confirmedAction(remove, { get question() { return `Delete “${post.title}” for good? This cannot be undone.`; }, busyText: 'Deleting…' }, async () => {
    await api('DELETE', `/posts/${encodeURIComponent(post.id)}`);
    ctx.navigate('/admin/posts');
  }, message);

  // The preview follows the typing, rendered by the server exactly as the public page will be.
  let timer = null;
  let asked = 0;
  async function refreshPreview() {
    const mine = ++asked;
    try {
      const data = await api('POST', '/posts/preview', { content: content.value });
      if (mine !== asked) return;
      // Server-rendered and sanitised (raw HTML escaped, unsafe links dropped): the one place markup is set.
      previewBody.innerHTML = data.html;
      if (!data.html) replace(previewBody, h('p', { class: 'muted' }, 'Nothing to preview yet.'));
    } catch (error) {
      if (mine === asked) replace(previewBody, h('p', { class: 'message error' }, `No preview: ${error.message}`));
    }
  }
  content.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(refreshPreview, PREVIEW_DELAY_MS);
  });

  drawState();
  main.append(h('p', { class: 'crumbs' }, link('/admin/posts', '← Posts')), heading(isNew ? 'New post' : 'Edit post'), state, writerNotes(ctx.params.id), form);
  // Its views of the last 30 days, below the form (stats are extra: nothing when they fail).
  if (!isNew) postChart(ctx.params.id).then((chart) => form.isConnected && form.after(chart), () => {});
  await refreshPreview();
  return () => clearTimeout(timer);
}
