import { api } from './api.js';
import { busy, field, h, heading, link, messageLine } from './ui.js';

const MIN_PASSWORD = 10;

/** /admin/setup#token=…: a mailed reset link (or one the operator's CLI printed); choose a password, then signed in. */
export function render(main, ctx) {
  ctx.setTitle('Choose your password');
  // The token lives in the fragment (never sent to a server or in a Referer); read it, then drop it from the address.
  const token = new URLSearchParams(location.hash.slice(1)).get('token') || sessionStorage.getItem('setup-token');
  if (location.hash) {
    if (token) sessionStorage.setItem('setup-token', token);
    history.replaceState(null, '', location.pathname);
  }
  main.append(heading('Choose your password'));
  if (!token) {
    main.append(h('p', { class: 'message error', role: 'alert' }, 'This setup link is incomplete. Open the whole link you were sent, or ask for a new one (Forgot password? on the sign-in page).'), h('p', {}, link('/admin/sign-in', 'Sign in')));
    return;
  }
  const password = h('input', { type: 'password', autocomplete: 'new-password', required: true, minlength: MIN_PASSWORD });
  const repeat = h('input', { type: 'password', autocomplete: 'new-password', required: true, minlength: MIN_PASSWORD });
  const button = h('button', { type: 'submit' }, 'Set password');
  const message = messageLine();
  const form = h(
    'form',
    { class: 'card narrow' },
    field('Password', password, `At least ${MIN_PASSWORD} characters.`),
    field('Repeat password', repeat),
    message.el,
    h('div', { class: 'actions' }, button),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.clear();
    if (password.value !== repeat.value) return message.error('The two passwords differ.');
    try {
      const data = await busy(button, () => api('POST', '/auth/setup', { token, password: password.value }), 'Saving…');
      sessionStorage.removeItem('setup-token');
      ctx.signedIn(data.session);
      ctx.navigate('/admin/posts', { replace: true });
    } catch (error) {
      message.error(error);
    }
  });
  main.append(form);
  password.focus();
}
