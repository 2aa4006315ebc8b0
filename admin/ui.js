// Building the page from data. Text from the API only ever becomes text nodes or attribute
// values (never markup); the one exception is the server-sanitised preview HTML in the editor.

let uid = 0;
/** A fresh element id. */
export const nextId = (prefix = 'f') => `${prefix}-${++uid}`;

const PROPERTIES = new Set(['value', 'checked', 'disabled', 'hidden', 'selected', 'required', 'multiple', 'readOnly']);

/** `h('a', { href }, 'text', child)`: an element; `on<event>` attributes become listeners. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.className = value;
    else if (PROPERTIES.has(name)) el[name] = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A labelled control: `field('Title', h('input', {...}), 'hint')` → the wrapper; the control gets an id. */
export function field(label, control, hint) {
  const id = control.id || nextId();
  control.id = id;
  let hintEl = null;
  if (hint) {
    hintEl = h('p', { class: 'hint', id: `${id}-hint` }, hint);
    control.setAttribute('aria-describedby', hintEl.id);
  }
  return h('div', { class: 'field' }, h('label', { for: id }, label), hintEl, control);
}

/** A select of [value, text] pairs. */
export function select(options, value, attrs = {}) {
  return h('select', attrs, options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)));
}

/** A message line: `role="alert"` for errors, `role="status"` for the rest; empty until told. */
export function messageLine() {
  const el = h('p', { class: 'message', role: 'status' });
  return {
    el,
    ok(text) {
      el.setAttribute('role', 'status');
      el.className = 'message ok';
      el.textContent = text;
    },
    error(error) {
      el.setAttribute('role', 'alert');
      el.className = 'message error';
      el.textContent = error instanceof Error ? error.message : String(error);
    },
    clear() {
      el.className = 'message';
      el.textContent = '';
    },
  };
}

/** Asks before something that cannot be undone, in a modal dialog; resolves true on confirm. */
export function confirmDialog(question, action = 'Delete', cancel = 'Cancel') {
  return new Promise((resolve) => {
    const dialog = h(
      'dialog',
      { class: 'confirm', 'aria-labelledby': 'confirm-q' },
      h('form', { method: 'dialog' }, h('p', { id: 'confirm-q' }, question), h('div', { class: 'actions' }, h('button', { value: 'cancel', class: 'secondary' }, cancel), h('button', { value: 'confirm', class: 'danger' }, action))),
    );
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'confirm');
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

/**
 * A button that asks first (confirmDialog) and then does `work` with the button busy; a
 * failure is shown on `message`. For every action that cannot be undone. `ask` is read at
 * each press (a getter may name what the page shows by then).
 */
export function confirmedAction(button, ask, work, message) {
  button.addEventListener('click', async () => {
    if (!(await confirmDialog(ask.question, ask.action))) return;
    try {
      await busy(button, work, ask.busyText);
    } catch (error) {
      message.error(error);
    }
  });
}

/** Runs `work` with the button disabled (and the form marked busy) until it settles. */
export async function busy(button, work, busyText) {
  const text = button.textContent;
  const form = button.form;
  button.disabled = true;
  if (busyText) button.textContent = busyText;
  if (form) form.setAttribute('aria-busy', 'true');
  try {
    return await work();
  } finally {
    button.disabled = false;
    button.textContent = text;
    if (form) form.removeAttribute('aria-busy');
  }
}

/** A date and time as the person's browser writes them. */
export function when(value) {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toLocaleString();
}

/** The heading of a screen, focusable so that moving between screens lands on it. */
export function heading(text) {
  return h('h1', { tabindex: '-1' }, text);
}

/** A link inside the admin UI (the router takes it over). */
export function link(href, text, attrs = {}) {
  return h('a', { href, ...attrs }, text);
}

/** A shown-once secret: its text, selectable, and a button copying it. */
export function secretBox(label, secret) {
  const code = h('code', { class: 'secret' }, secret);
  const copy = h('button', { type: 'button', class: 'secondary' }, 'Copy');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(secret);
      copy.textContent = 'Copied';
    } catch {
      const range = document.createRange();
      range.selectNodeContents(code);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
    }
  });
  return h('div', { class: 'once', role: 'status' }, h('p', {}, h('strong', {}, label)), h('p', {}, code), copy);
}

/** Page links: Previous / Page n of m / Next. */
export function pager(pagination, hrefFor) {
  const { page, pages } = pagination;
  if (pages <= 1) return null;
  return h(
    'nav',
    { class: 'pager', 'aria-label': 'Pages' },
    page > 1 ? link(hrefFor(page - 1), 'Previous', { rel: 'prev' }) : null,
    h('span', {}, `Page ${page} of ${pages}`),
    page < pages ? link(hrefFor(page + 1), 'Next', { rel: 'next' }) : null,
  );
}

/** Repeats `fn` every `ms` until it returns false or `stop()` is called; one at a time. */
export function poll(fn, ms) {
  let timer = null;
  let stopped = false;
  const tick = async () => {
    // A failed round (the network, say) is tried again on the next tick.
    const again = await Promise.resolve().then(fn).then((result) => result !== false, () => true);
    if (again && !stopped) timer = setTimeout(tick, ms);
  };
  timer = setTimeout(tick, ms);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** Files chosen with `input` or dropped on `zone` go to `upload` (an array of File). */
export function fileDrop(zone, input, upload) {
  input.addEventListener('change', () => input.files.length && upload([...input.files]));
  zone.addEventListener('dragover', (event) => {
    event.preventDefault();
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('over');
    if (event.dataTransfer.files.length) upload([...event.dataTransfer.files]);
  });
}
