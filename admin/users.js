import { api } from './api.js';
import { busy, confirmedAction, field, h, heading, messageLine, nextId, replace, secretBox, select, when } from './ui.js';

const ROLES = [['editor', 'Editor'], ['author', 'Author'], ['contributor', 'Contributor'], ['owner', 'Owner']];

export async function render(main, ctx) {
  ctx.setTitle('Users');
  const email = h('input', { type: 'email', required: true, autocomplete: 'off' });
  const role = select(ROLES, 'editor');
  const button = h('button', { type: 'submit' }, 'Invite');
  const message = messageLine();
  const shown = h('div');
  const form = h('form', { class: 'card' }, h('div', { class: 'grid' }, field('Email', email), field('Role', role)), message.el, h('div', { class: 'actions' }, button));
  const list = h('div');
  main.append(
    heading('Users'),
    h('p', {}, 'Owners manage everything; editors write, generate and publish every post; authors write and publish their own; contributors write their own drafts and submit them for review.'),
    h('h2', {}, 'Invite someone'),
    form,
    shown,
    h('h2', {}, 'People'),
    list,
  );

  const showLink = (who, url) => replace(shown, secretBox(`Send this setup link to ${who}: they choose a password with it (valid 24 hours, once)`, url));

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.clear();
    replace(shown);
    if (!email.value.trim()) return message.error('Give an email address.');
    try {
      const data = await busy(button, () => api('POST', '/users', { email: email.value.trim(), role: role.value }), 'Inviting…');
      message.ok(data.message);
      if (data.setupUrl) showLink(data.user.email, data.setupUrl);
      email.value = '';
      await load();
    } catch (error) {
      message.error(error);
    }
  });

  async function load() {
    const data = await api('GET', '/users');
    replace(
      list,
      h(
        'ul',
        { class: 'rows' },
        data.users.map((user) => {
          const me = user.id === ctx.session.user.id;
          const roleSelect = select(ROLES, user.role, { id: nextId('role') });
          roleSelect.addEventListener('change', async () => {
            roleSelect.disabled = true;
            try {
              const result = await api('PATCH', `/users/${encodeURIComponent(user.id)}`, { role: roleSelect.value });
              message.ok(result.message);
            } catch (error) {
              roleSelect.value = user.role;
              message.error(error);
            } finally {
              roleSelect.disabled = false;
            }
          });
          const reset = h('button', { type: 'button', class: 'secondary small' }, user.active ? 'Reset password' : 'New setup link');
          reset.addEventListener('click', async () => {
            try {
              const result = await busy(reset, () => api('POST', `/users/${encodeURIComponent(user.id)}/reset`));
              showLink(user.email, result.setupUrl);
            } catch (error) {
              message.error(error);
            }
          });
          const remove = h('button', { type: 'button', class: 'danger small' }, 'Remove');
          confirmedAction(remove, { question: `Remove ${user.email} from this site?`, action: 'Remove' }, async () => {
            await api('DELETE', `/users/${encodeURIComponent(user.id)}`);
            message.ok(`Removed ${user.email}.`);
            await load();
          }, message);
          return h(
            'li',
            { class: 'row' },
            h('p', { class: 'row-title' }, h('strong', { class: 'wrap' }, user.email), me ? ' (you)' : ''),
            h('p', { class: 'meta' }, user.active ? `Since ${when(user.createdAt)}` : 'Invited: no password yet'),
            h('div', { class: 'actions' }, h('label', { for: roleSelect.id, class: 'inline' }, `Role for ${user.email}`), roleSelect, reset, me ? null : remove),
          );
        }),
      ),
    );
  }
  await load();
}
