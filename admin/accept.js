import { api } from './api.js';
import { busy, field, h, heading, link, messageLine } from './ui.js';

const MIN_PASSWORD = 10;

/**
 * /admin/accept#token=…: an invitation to a site. Signed in as the invited person: one button.
 * Not signed in: the account's own password (an email with an account), or a new one (without).
 */
export function render(main, ctx) {
  ctx.setTitle('Accept the invitation');
  // The token lives in the fragment (never sent to a server or in a Referer); read it, then drop it from the address.
  const token = new URLSearchParams(location.hash.slice(1)).get('token') || sessionStorage.getItem('invitation-token');
  if (location.hash) {
    if (token) sessionStorage.setItem('invitation-token', token);
    history.replaceState(null, '', location.pathname);
  }
  main.append(heading('Accept the invitation'));
  if (!token) {
    main.append(h('p', { class: 'message error', role: 'alert' }, 'This invitation link is incomplete. Open the whole link you were sent.'), h('p', {}, link('/admin/sign-in', 'Sign in')));
    return;
  }
  const message = messageLine();
  const joined = (data) => {
    sessionStorage.removeItem('invitation-token');
    ctx.signedIn(data.session);
    ctx.navigate('/admin/posts', { replace: true });
  };
  if (ctx.session) {
    const button = h('button', { type: 'submit' }, 'Accept the invitation');
    const form = h('form', { class: 'card narrow' }, h('p', {}, `You are signed in as ${ctx.session.user.email}. The invitation is for one email address: accept it if it is yours.`), message.el, h('div', { class: 'actions' }, button));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      message.clear();
      try {
        joined(await busy(button, () => api('POST', '/auth/accept', { token }), 'Accepting…'));
      } catch (error) {
        message.error(error);
      }
    });
    main.append(form);
    return;
  }
  const password = h('input', { type: 'password', autocomplete: 'current-password', required: true });
  const button = h('button', { type: 'submit' }, 'Accept the invitation');
  const form = h(
    'form',
    { class: 'card narrow' },
    field('Password', password, `If you already have an account on this service, your own password. If not, choose one (at least ${MIN_PASSWORD} characters): your account is made with it.`),
    message.el,
    h('div', { class: 'actions' }, button),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.clear();
    try {
      joined(await busy(button, () => api('POST', '/auth/accept', { token, password: password.value }), 'Accepting…'));
    } catch (error) {
      password.value = '';
      message.error(error);
      password.focus();
    }
  });
  main.append(form, h('p', {}, link('/admin/forgot', 'Forgot your password?')));
  password.focus();
}
