import { api } from './api.js';
import { busy, confirmedAction, h, heading, messageLine, replace, secretBox, when } from './ui.js';

export async function render(main, ctx) {
  ctx.setTitle('API keys');
  const create = h('button', { type: 'button' }, 'Create key');
  const message = messageLine();
  const shown = h('div');
  const list = h('div');
  main.append(heading('API keys'), h('p', {}, 'Keys let programs use the API as an owner of this site. A key is shown once, when it is created; afterwards only its prefix.'), h('div', { class: 'actions' }, create), message.el, shown, h('h2', {}, 'Keys'), list);

  create.addEventListener('click', async () => {
    message.clear();
    try {
      const data = await busy(create, () => api('POST', '/keys'), 'Creating…');
      replace(shown, secretBox('Your new API key (shown only now: keep it somewhere safe)', data.apiKey));
      await load();
    } catch (error) {
      message.error(error);
    }
  });

  async function load() {
    const data = await api('GET', '/keys');
    if (data.keys.length === 0) return replace(list, h('p', { class: 'muted' }, 'No keys.'));
    replace(
      list,
      h(
        'ul',
        { class: 'rows' },
        data.keys.map((key) => {
          let revoke = null;
          if (!key.revokedAt) {
            revoke = h('button', { type: 'button', class: 'danger small', 'aria-label': `Revoke ${key.prefix}…` }, 'Revoke');
            confirmedAction(revoke, { question: `Revoke the key ${key.prefix}…? Programs using it stop working at once.`, action: 'Revoke' }, async () => {
              await api('DELETE', `/keys/${encodeURIComponent(key.id)}`);
              message.ok(`Revoked ${key.prefix}…`);
              await load();
            }, message);
          }
          return h(
            'li',
            { class: 'row' },
            h('p', { class: 'row-title' }, h('code', { class: 'prefix' }, `${key.prefix}…`)),
            h(
              'p',
              { class: 'meta' },
              h('span', { class: `badge ${key.revokedAt ? 'failed' : 'live'}` }, key.revokedAt ? 'Revoked' : 'Active'),
              ` Created ${when(key.createdAt)} · last used ${key.lastUsedAt ? when(key.lastUsedAt) : 'never'}`,
              key.revokedAt ? ` · revoked ${when(key.revokedAt)}` : '',
            ),
            revoke ? h('div', { class: 'actions' }, revoke) : null,
          );
        }),
      ),
    );
  }
  await load();
}
