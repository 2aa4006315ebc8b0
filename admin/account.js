import { api } from './api.js';
import { busy, field, h, heading, messageLine } from './ui.js';

const MIN_PASSWORD = 10;

/** The signed-in person: their sites and roles, and a new password (which ends their other sessions). */
export function render(main, ctx) {
  ctx.setTitle('Your account');
  const { session } = ctx;
  const current = h('input', { type: 'password', autocomplete: 'current-password', required: true });
  const next = h('input', { type: 'password', autocomplete: 'new-password', required: true, minlength: MIN_PASSWORD });
  const repeat = h('input', { type: 'password', autocomplete: 'new-password', required: true, minlength: MIN_PASSWORD });
  const button = h('button', { type: 'submit' }, 'Change password');
  const message = messageLine();
  const form = h(
    'form',
    { class: 'card narrow' },
    field('Current password', current),
    field('New password', next, `At least ${MIN_PASSWORD} characters. Your other sessions end.`),
    field('Repeat new password', repeat),
    message.el,
    h('div', { class: 'actions' }, button),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.clear();
    if (next.value !== repeat.value) return message.error('The two new passwords differ.');
    try {
      await busy(button, () => api('POST', '/auth/password', { currentPassword: current.value, newPassword: next.value }), 'Changing…');
      form.reset();
      message.ok('Password changed. Your other sessions have ended.');
    } catch (error) {
      message.error(error);
    }
  });
  main.append(
    heading('Your account'),
    h('p', {}, 'Signed in as ', h('strong', { class: 'wrap' }, session.user.email), '.'),
    h('h2', {}, 'Your sites'),
    h('ul', {}, session.sites.map((site) => h('li', {}, `${site.name} (/sites/${site.handle}/): ${site.role}`))),
    h('h2', {}, 'Password'),
    form,
  );
}
