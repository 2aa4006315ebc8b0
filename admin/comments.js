import { api, query } from './api.js';
import { busy, confirmedAction, field, h, heading, link, messageLine, pager, replace, when } from './ui.js';

const TABS = [
  ['pending', 'Pending'],
  ['approved', 'Approved'],
  ['spam', 'Spam'],
];
const PAGE_SIZE = 20;

/** Tells the navigation that the pending count may have changed. */
export const commentsChanged = () => document.dispatchEvent(new CustomEvent('comments-changed'));

/** Why a comment waits or is spam, as staff read it ("held: 4 links"). */
const reasonText = (comment) => (comment.heldFor ? `${comment.status === 'spam' ? 'spam' : 'held'}: ${comment.heldFor}` : null);

export async function render(main, ctx) {
  ctx.setTitle('Comments');
  const status = TABS.some(([value]) => value === ctx.search.get('status')) ? ctx.search.get('status') : 'pending';
  const postId = ctx.search.get('postId') || '';
  const page = Math.max(1, Number(ctx.search.get('page')) || 1);
  const hrefFor = (next) => `/admin/comments${query({ status: next.status ?? status, postId: next.postId ?? postId, page: next.page > 1 ? next.page : undefined })}`;

  const message = messageLine();
  const tabs = h(
    'nav',
    { class: 'tabs', 'aria-label': 'Comment status' },
    TABS.map(([value, text]) => link(hrefFor({ status: value, page: 1 }), text, { 'aria-current': value === status ? 'page' : null, 'data-status': value })),
  );
  const filter = h('p', { class: 'meta' });
  const list = h('div', { 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading comments…'));
  const mailChoice = h('div');
  main.append(heading('Comments'), mailChoice, tabs, filter, message.el, list);
  if (ctx.session.role === 'owner') main.append(eraseForm());
  void drawMailChoice().catch(() => replace(mailChoice));

  /** Each moderator's own choice: a mail when comments wait (at most one per post an hour). */
  async function drawMailChoice() {
    const data = await api('GET', '/comments/mail');
    const box = h('input', { type: 'checkbox', id: 'comment-mail', checked: data.enabled, disabled: !data.mailConfigured });
    const note = messageLine();
    box.addEventListener('change', async () => {
      note.clear();
      box.disabled = true;
      try {
        const saved = await api('PUT', '/comments/mail', { enabled: box.checked });
        note.ok(saved.enabled ? 'You will be mailed when comments wait.' : 'No more mail about waiting comments.');
      } catch (error) {
        box.checked = !box.checked;
        note.error(error);
      } finally {
        box.disabled = false;
      }
    });
    replace(
      mailChoice,
      h('div', { class: 'check' }, box, h('label', { for: box.id }, 'Email me when comments wait (at most one mail per post an hour)')),
      data.mailConfigured ? null : h('p', { class: 'hint' }, 'Mail is not set up on this service (SMTP_URL), so none is sent.'),
      note.el,
    );
  }

  async function load() {
    const data = await api('GET', `/comments${query({ status, postId, page, limit: PAGE_SIZE })}`);
    const pendingTab = tabs.querySelector('[data-status="pending"]');
    replace(pendingTab, 'Pending', data.pending > 0 ? h('span', { class: 'count' }, ` (${data.pending})`) : null);
    commentsChanged();
    const forPost = postId && data.comments[0] ? data.comments[0].post : null;
    replace(filter, postId ? ['On ', forPost ? h('strong', {}, forPost.title) : 'one post', ' · ', link(hrefFor({ postId: '', page: 1 }), 'All posts')] : null);
    if (data.comments.length === 0) {
      replace(list, h('p', { class: 'muted' }, status === 'pending' ? 'Nothing waits for a moderator.' : status === 'approved' ? 'No approved comments yet.' : 'No spam.'));
      return;
    }
    replace(
      list,
      h('p', { class: 'muted' }, `${data.pagination.total} comment${data.pagination.total === 1 ? '' : 's'}`),
      h('ul', { class: 'rows comments' }, data.comments.map(row)),
      pager(data.pagination, (n) => hrefFor({ page: n })),
    );
  }

  function row(comment) {
    const item = h('li', { class: 'row comment', 'data-comment': comment.id });
    const actions = h('div', { class: 'actions' });
    const moderate = (to, text) => {
      const button = h('button', { type: 'button', class: to === 'approved' ? 'small' : 'secondary small' }, text);
      button.addEventListener('click', async () => {
        message.clear();
        try {
          await busy(button, () => api('PATCH', `/comments/${encodeURIComponent(comment.id)}`, { status: to }));
          message.ok(`${to === 'approved' ? 'Approved' : to === 'spam' ? 'Marked as spam' : 'Moved to pending'}: ${comment.authorName}.`);
          await load();
        } catch (error) {
          message.error(error);
        }
      });
      return button;
    };
    if (comment.status !== 'approved') actions.append(moderate('approved', 'Approve'));
    if (comment.status !== 'spam') actions.append(moderate('spam', 'Spam'));
    if (comment.status === 'spam') actions.append(moderate('pending', 'Not spam'));
    const reply = h('button', { type: 'button', class: 'secondary small', 'aria-expanded': 'false' }, 'Reply');
    const replyHolder = h('div');
    // A reply goes under a published comment that is not itself one (one level deep).
    if (comment.status === 'approved' && comment.parentId === null) {
      actions.append(reply);
      reply.addEventListener('click', () => {
        const open = reply.getAttribute('aria-expanded') === 'true';
        reply.setAttribute('aria-expanded', String(!open));
        if (open) return replace(replyHolder);
        replace(replyHolder, replyForm(comment, () => reply.click()));
        replyHolder.querySelector('textarea').focus();
      });
    }
    const remove = h('button', { type: 'button', class: 'danger small' }, 'Delete');
    confirmedAction(remove, { question: `Delete the comment by ${comment.authorName}${comment.parentId === null ? ' and its replies' : ''}?` }, async () => {
      await api('DELETE', `/comments/${encodeURIComponent(comment.id)}`);
      message.ok(`Deleted the comment by ${comment.authorName}.`);
      await load();
    }, message);
    actions.append(remove);

    const reason = reasonText(comment);
    const postLink = comment.post.title ? link(`/admin/posts/${encodeURIComponent(comment.post.id)}`, comment.post.title) : 'a deleted post';
    replace(
      item,
      h('p', { class: 'row-title' }, h('strong', { class: 'comment-author' }, comment.authorName), comment.byStaff ? h('span', { class: 'muted' }, ' (the site)') : null, ' on ', postLink),
      h(
        'p',
        { class: 'meta' },
        h('span', { class: `badge ${comment.status === 'approved' ? 'live' : comment.status === 'spam' ? 'failed' : 'pending'}` }, comment.status),
        ` ${when(comment.createdAt)}`,
        comment.parentId ? ' · a reply' : '',
        comment.authorEmail ? [' · ', h('span', { class: 'comment-email' }, comment.authorEmail)] : '',
        reason ? [' · ', h('span', { class: 'comment-reason' }, reason)] : '',
      ),
      h('p', { class: 'comment-text' }, comment.body),
      actions,
      replyHolder,
    );
    return item;
  }

  function replyForm(comment, close) {
    const text = h('textarea', { rows: 4, maxlength: 5000, required: true });
    const send = h('button', { type: 'submit' }, 'Publish reply');
    const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
    cancel.addEventListener('click', close);
    const form = h('form', { class: 'reply-form' }, field(`Reply to ${comment.authorName}`, text, 'Published at once, as the site’s.'), h('div', { class: 'actions' }, send, cancel));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      message.clear();
      if (!text.value.trim()) return message.error('Write the reply first.');
      try {
        await busy(send, () => api('POST', `/posts/${encodeURIComponent(comment.post.id)}/comments`, { body: text.value, parentId: comment.id }), 'Publishing…');
        message.ok('Reply published.');
        await load();
      } catch (error) {
        message.error(error);
      }
    });
    return form;
  }

  function eraseForm() {
    const email = h('input', { type: 'email', required: true, maxlength: 254, autocomplete: 'off' });
    const button = h('button', { type: 'submit', class: 'danger' }, 'Erase email');
    const note = messageLine();
    const form = h(
      'form',
      { class: 'card' },
      h('h2', {}, 'Erase a commenter’s email'),
      field('Commenter’s email', email, 'Forgets it on every comment of the site; the comments stay.'),
      note.el,
      h('div', { class: 'actions' }, button),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      note.clear();
      try {
        const data = await busy(button, () => api('POST', '/comments/erase-email', { email: email.value.trim() }), 'Erasing…');
        note.ok(data.message);
        email.value = '';
        await load();
      } catch (error) {
        note.error(error);
      }
    });
    return form;
  }

  await load();
}
