import { api } from './api.js';
import { busy, field, h, heading, link, messageLine } from './ui.js';

/** /admin/forgot: ask for a reset link by mail (the same answer for any email). */
export function render(main, ctx) {
  ctx.setTitle('Forgot your password?');
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const button = h('button', { type: 'submit' }, 'Send me a link');
  const message = messageLine();
  const form = h('form', { class: 'card narrow' }, h('p', {}, 'Give the email you sign in with: a link to choose a new password goes to it.'), field('Email', email), message.el, h('div', { class: 'actions' }, button));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.clear();
    if (!email.value.trim()) return message.error('Give an email address.');
    try {
      const data = await busy(button, () => api('POST', '/auth/forgot', { email: email.value.trim() }), 'Sending…');
      message.ok(data.message);
    } catch (error) {
      message.error(error);
    }
  });
  main.append(heading('Forgot your password?'), form, h('p', {}, link('/admin/sign-in', 'Back to sign in')));
  email.focus();
}
