import { api } from './api.js';
import { busy, field, h, heading, link, messageLine } from './ui.js';

/** A path under /admin/ to go to after signing in (never elsewhere). */
function nextPath(search) {
  const next = search.get('next') || '';
  return /^\/admin\/[\w/?=&%.-]*$/.test(next) && !next.startsWith('/admin/sign-in') ? next : '/admin/posts';
}

export function render(main, ctx) {
  if (ctx.session) return ctx.navigate(nextPath(ctx.search), { replace: true });
  ctx.setTitle('Sign in');
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const message = messageLine();
  const form = h('form', { class: 'card narrow' }, field('Email', email), field('Password', password), message.el, h('div', { class: 'actions' }, button));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.clear();
    try {
      const data = await busy(button, () => api('POST', '/auth/sign-in', { email: email.value.trim(), password: password.value }), 'Signing in…');
      ctx.signedIn(data.session);
      ctx.navigate(nextPath(ctx.search), { replace: true });
    } catch (error) {
      password.value = '';
      message.error(error);
      password.focus();
    }
  });
  main.append(heading('Sign in'), form, h('p', {}, link('/admin/forgot', 'Forgot password?')));
}
