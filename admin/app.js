// The admin UI: who is signed in, the header and navigation, and a small router that shows one
// screen per path under /admin/ without reloading the page.
import { api, onUnauthorized } from './api.js';
import { h, link, replace } from './ui.js';
import * as signIn from './sign-in.js';
import * as setup from './setup.js';
import * as accept from './accept.js';
import * as forgot from './forgot.js';
import * as posts from './posts.js';
import * as editor from './editor.js';
import * as knowledge from './knowledge.js';
import * as media from './media.js';
import * as generate from './generate.js';
import * as batches from './batches.js';
import * as webhooks from './webhooks.js';
import * as subscribers from './subscribers.js';
import * as keys from './keys.js';
import * as users from './users.js';
import * as settings from './settings.js';
import * as account from './account.js';
import * as stats from './stats.js';
import * as comments from './comments.js';

const NAV = [
  ['/admin/posts', 'Posts', false],
  ['/admin/comments', 'Comments', 'moderator'],
  ['/admin/media', 'Media', false],
  ['/admin/stats', 'Stats', false],
  ['/admin/knowledge', 'Knowledge', false],
  ['/admin/generate', 'Generate', false],
  ['/admin/batches', 'Batches', false],
  ['/admin/subscribers', 'Subscribers', true],
  ['/admin/webhooks', 'Webhooks', true],
  ['/admin/keys', 'API keys', true],
  ['/admin/users', 'Users', true],
  ['/admin/settings', 'Settings', true],
];

/** Path pattern → screen; `public` screens need no session; `owner` ones need an owner. */
const ROUTES = [
  { path: /^\/admin\/sign-in$/, screen: signIn, public: true },
  { path: /^\/admin\/setup$/, screen: setup, public: true },
  { path: /^\/admin\/accept$/, screen: accept, public: true },
  { path: /^\/admin\/forgot$/, screen: forgot, public: true },
  { path: /^\/admin\/posts$/, screen: posts },
  { path: /^\/admin\/comments$/, screen: comments, moderator: true },
  { path: /^\/admin\/posts\/new$/, screen: editor },
  { path: /^\/admin\/posts\/(?<id>[\w-]+)$/, screen: editor },
  { path: /^\/admin\/media$/, screen: media },
  { path: /^\/admin\/stats$/, screen: stats },
  { path: /^\/admin\/knowledge$/, screen: knowledge },
  { path: /^\/admin\/generate$/, screen: generate },
  { path: /^\/admin\/batches$/, screen: batches },
  { path: /^\/admin\/subscribers$/, screen: subscribers, owner: true },
  { path: /^\/admin\/webhooks$/, screen: webhooks, owner: true },
  { path: /^\/admin\/keys$/, screen: keys, owner: true },
  { path: /^\/admin\/users$/, screen: users, owner: true },
  { path: /^\/admin\/settings$/, screen: settings, owner: true },
  { path: /^\/admin\/account$/, screen: account },
];

const main = document.getElementById('main');
const top = document.getElementById('top');
const nav = document.getElementById('nav');

let session = null;
let cleanup = null;
let renderCount = 0;
/** A screen's say on leaving it (the editor's unsaved text): resolves true to go. */
let leaveGuard = null;
/** A message for the next screen (a delete's confirmation). */
let flashed = null;
/** The path shown, to go back to when the back button's leave is refused. */
let currentPath = location.pathname + location.search;

const mayLeave = async () => (leaveGuard ? Boolean(await leaveGuard()) : true);

async function navigate(path, { replace: replaceEntry = false, force = false } = {}) {
  if (!force && !(await mayLeave())) return;
  if (replaceEntry) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  return show();
}

function signedIn(next) {
  session = next;
  drawChrome();
}

function drawChrome() {
  if (!session) {
    replace(top, h('span', { class: 'brand' }, 'Blog admin'));
    nav.hidden = true;
    replace(nav);
    return;
  }
  const owner = session.role === 'owner';
  const signOut = h('button', { type: 'button', class: 'secondary' }, 'Sign out');
  signOut.addEventListener('click', async () => {
    signOut.disabled = true;
    try {
      await api('POST', '/auth/sign-out');
    } catch {
      // Signed out anyway as far as this page goes: the next request needs a session.
    }
    session = null;
    drawChrome();
    navigate('/admin/sign-in', { replace: true });
  });
  let switcher = null;
  if (session.sites && session.sites.length > 1) {
    const choose = h(
      'select',
      { id: 'site-switch' },
      session.sites.map((site) => h('option', { value: site.id, selected: site.id === session.site.id }, `${site.name} (${site.role})`)),
    );
    choose.addEventListener('change', async () => {
      choose.disabled = true;
      try {
        const data = await api('PUT', '/auth/session/site', { siteId: choose.value });
        signedIn(data.session);
        navigate('/admin/posts');
      } catch (error) {
        choose.disabled = false;
        alertMain(error);
      }
    });
    switcher = h('div', { class: 'switcher' }, h('label', { for: 'site-switch' }, 'Site'), choose);
  }
  // At phone width the navigation folds behind a "Menu" button (one row of header, not three).
  const menu = h('button', { type: 'button', class: 'menu-button secondary', 'aria-expanded': 'false', 'aria-controls': 'nav' }, 'Menu');
  menu.addEventListener('click', () => {
    const open = menu.getAttribute('aria-expanded') !== 'true';
    menu.setAttribute('aria-expanded', String(open));
    nav.classList.toggle('open', open);
  });
  replace(
    top,
    menu,
    h('span', { class: 'brand' }, 'Blog admin'),
    switcher || h('span', { class: 'site-name' }, session.site.name),
    h('span', { class: 'who' }, link('/admin/account', session.user.email, { class: 'email', title: 'Your account' }), signOut),
  );
  replace(
    nav,
    h('ul', {}, NAV.filter(([, , only]) => owner || !only || (only === 'moderator' && moderator())).map(([href, text]) => h('li', {}, link(href, text)))),
  );
  nav.hidden = false;
  markCurrent();
  void refreshPendingComments();
}

/** Owners and editors moderate comments. */
const moderator = () => session && (session.role === 'owner' || session.role === 'editor');

/** The pending comments' count beside "Comments" in the navigation. */
async function refreshPendingComments() {
  const entry = nav.querySelector('a[href="/admin/comments"]');
  if (!entry || !moderator()) return;
  let pending;
  try {
    pending = (await api('GET', '/comments?status=pending&limit=1')).pending;
  } catch {
    return; // The count is extra: the screen says what went wrong.
  }
  replace(entry, 'Comments', pending > 0 ? [' ', h('span', { class: 'nav-count' }, String(pending)), h('span', { class: 'visually-hidden' }, ' pending')] : null);
}
document.addEventListener('comments-changed', () => void refreshPendingComments());

function markCurrent() {
  for (const a of nav.querySelectorAll('a')) {
    const here = location.pathname === a.pathname || location.pathname.startsWith(`${a.pathname}/`);
    if (here) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function alertMain(error) {
  main.prepend(h('p', { class: 'message error', role: 'alert' }, error.message || String(error)));
}

async function show() {
  const count = ++renderCount;
  if (cleanup) {
    cleanup();
    cleanup = null;
  }
  let path = location.pathname.replace(/\/+$/, '') || '/admin';
  if (path === '/admin') {
    history.replaceState(null, '', session ? '/admin/posts' : '/admin/sign-in');
    path = location.pathname;
  }
  const route = ROUTES.find((r) => r.path.test(path));
  if (!route) {
    document.title = 'Not found – Blog admin';
    replace(main, h('h1', { tabindex: '-1' }, 'Not found'), h('p', {}, 'No admin page has this address. ', link('/admin/posts', 'Go to the posts')));
    return;
  }
  if (!route.public && !session) {
    const next = location.pathname + location.search;
    history.replaceState(null, '', `/admin/sign-in?next=${encodeURIComponent(next)}`);
    return show();
  }
  if (route.moderator && !moderator()) {
    document.title = 'Owners and editors only – Blog admin';
    replace(main, h('h1', { tabindex: '-1' }, 'Owners and editors only'), h('p', {}, 'Only owners and editors of this site moderate comments.'));
    return;
  }
  if (route.owner && session.role !== 'owner') {
    document.title = 'Owners only – Blog admin';
    replace(main, h('h1', { tabindex: '-1' }, 'Owners only'), h('p', {}, 'Only an owner of this site can use this page.'));
    return;
  }
  markCurrent();
  currentPath = location.pathname + location.search;
  // A screen changed: the folded menu closes.
  const menuButton = top.querySelector('.menu-button');
  if (menuButton) menuButton.setAttribute('aria-expanded', 'false');
  nav.classList.remove('open');
  leaveGuard = null;
  const params = path.match(route.path).groups || {};
  const ctx = {
    session,
    params,
    search: new URLSearchParams(location.search),
    navigate,
    signedIn,
    setTitle: (title) => {
      document.title = `${title} – Blog admin`;
    },
    /** `guard` is asked before the screen is left inside the UI; null: nothing to ask. */
    setLeaveGuard: (guard) => {
      leaveGuard = guard;
    },
    /** Shows `text` on the next screen (what a delete did, once its screen is gone). */
    flash: (text) => {
      flashed = text;
    },
  };
  replace(main);
  try {
    const result = await route.screen.render(main, ctx);
    if (count !== renderCount) {
      if (typeof result === 'function') result();
      return;
    }
    if (typeof result === 'function') cleanup = result;
  } catch (error) {
    if (count !== renderCount) return;
    if (error.status === 401) return;
    alertMain(error);
  }
  if (flashed) {
    const note = h('p', { class: 'message ok', role: 'status' }, flashed);
    flashed = null;
    const title = main.querySelector('h1');
    if (title) title.after(note);
    else main.prepend(note);
  }
  const first = main.querySelector('h1');
  if (first && shown > 0) first.focus();
  shown++;
}
let shown = 0;

// Links inside /admin/ change the screen, not the page.
document.addEventListener('click', (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const a = event.target.closest('a[href]');
  if (!a || a.target || a.hasAttribute('download') || a.origin !== location.origin) return;
  if (!a.pathname.startsWith('/admin/') || a.pathname.startsWith('/admin/assets/')) return;
  event.preventDefault();
  if (a.pathname === location.pathname && a.search === location.search) return;
  navigate(a.pathname + a.search);
});
window.addEventListener('popstate', async () => {
  // The address has changed already: put it back when the screen asks to stay.
  const target = location.pathname + location.search;
  if (leaveGuard && target !== currentPath) {
    const from = currentPath;
    history.pushState(null, '', from);
    if (!(await mayLeave())) return;
    history.replaceState(null, '', target);
  }
  show();
});

onUnauthorized(() => {
  if (!session) return;
  session = null;
  drawChrome();
  const next = location.pathname + location.search;
  navigate(`/admin/sign-in?next=${encodeURIComponent(next)}`, { replace: true });
});

async function start() {
  // The server marks the page when the browser sent no session cookie: nothing to ask then.
  const noCookie = document.querySelector('meta[name="admin-session"][content="none"]');
  if (location.pathname !== '/admin/setup' && !noCookie) {
    try {
      const data = await api('GET', '/auth/session');
      session = data.session;
    } catch {
      session = null;
    }
  }
  drawChrome();
  await show();
}

start();
