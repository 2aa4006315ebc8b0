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
  const pending = h('div');
  const list = h('div');
  main.append(
    heading('Users'),
    h('p', {}, 'Owners manage everything; editors write, generate and publish every post; authors write and publish their own; contributors write their own drafts and submit them for review. People join when they accept their invitation: by mail when mail is set up, else through a link you hand them.'),
    h('h2', {}, 'Invite someone'),
    form,
    shown,
    h('h2', {}, 'Pending invitations'),
    pending,
    h('h2', {}, 'People'),
    list,
  );

  // Without mail the invitation link is shown, to hand over; it joins the site only when its person accepts.
  const showSent = (data) => {
    message.ok(data.message);
    replace(shown, data.inviteUrl ? secretBox(`Mail is not set up: send this invitation link to ${data.invitation.email} yourself (valid 7 days)`, data.inviteUrl) : null);
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.clear();
    replace(shown);
    if (!email.value.trim()) return message.error('Give an email address.');
    try {
      const data = await busy(button, () => api('POST', '/users', { email: email.value.trim(), role: role.value }), 'Inviting…');
      showSent(data);
      email.value = '';
      await load();
    } catch (error) {
      message.error(error);
    }
  });

  function invitationRow(invitation) {
    const resend = h('button', { type: 'button', class: 'secondary small' }, 'Send again');
    resend.addEventListener('click', async () => {
      try {
        showSent(await busy(resend, () => api('POST', `/users/invitations/${encodeURIComponent(invitation.id)}/resend`)));
        await load();
      } catch (error) {
        message.error(error);
      }
    });
    const revoke = h('button', { type: 'button', class: 'danger small' }, 'Revoke');
    confirmedAction(revoke, { question: `Revoke the invitation of ${invitation.email}?`, action: 'Revoke' }, async () => {
      await api('DELETE', `/users/invitations/${encodeURIComponent(invitation.id)}`);
      message.ok(`Revoked the invitation of ${invitation.email}.`);
      replace(shown);
      await load();
    }, message);
    const state = invitation.status === 'expired' ? `Expired ${when(invitation.expiresAt)}: send it again` : `Pending: sent ${when(invitation.sentAt)}, valid until ${when(invitation.expiresAt)}`;
    return h(
      'li',
      { class: 'row' },
      h('p', { class: 'row-title' }, h('strong', { class: 'wrap' }, invitation.email), ` (${invitation.role})`),
      h('p', { class: 'meta' }, state),
      h('div', { class: 'actions' }, resend, revoke),
    );
  }

  async function load() {
    const data = await api('GET', '/users');
    replace(pending, data.invitations.length ? h('ul', { class: 'rows invitations' }, data.invitations.map(invitationRow)) : h('p', { class: 'meta' }, 'No pending invitations.'));
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
            h('p', { class: 'meta' }, `Since ${when(user.createdAt)}`),
            h('div', { class: 'actions' }, h('label', { for: roleSelect.id, class: 'inline' }, `Role for ${user.email}`), roleSelect, me ? null : remove),
          );
        }),
      ),
    );
  }
  await load();
}
