import { api, query } from './api.js';
import { busy, confirmedAction, field, h, heading, messageLine, replace, secretBox, when } from './ui.js';

const EVENTS = ['post.created', 'post.updated', 'post.published', 'post.unpublished', 'post.deleted', 'task.succeeded', 'task.failed', 'knowledge.indexed', 'knowledge.failed', 'newsletter.sent', 'comment.created', 'comment.approved'];

export async function render(main, ctx) {
  ctx.setTitle('Webhooks');
  const url = h('input', { type: 'url', required: true, maxlength: 2000, placeholder: 'https://example.com/hooks/blog' });
  const description = h('input', { type: 'text', maxlength: 500 });
  const boxes = EVENTS.map((event) => h('input', { type: 'checkbox', value: event, id: `ev-${event.replace('.', '-')}`, checked: event.startsWith('post.') }));
  const button = h('button', { type: 'submit' }, 'Add webhook');
  const message = messageLine();
  const shown = h('div');
  const form = h(
    'form',
    { class: 'card' },
    field('URL', url),
    field('Description', description),
    h('fieldset', {}, h('legend', {}, 'Events'), h('div', { class: 'checks' }, boxes.map((box) => h('div', { class: 'check' }, box, h('label', { for: box.id }, box.value))))),
    message.el,
    h('div', { class: 'actions' }, button),
  );
  const list = h('div');
  main.append(heading('Webhooks'), h('p', {}, 'Endpoints told about events, signed with their secret.'), shown, form, h('h2', {}, 'Endpoints'), list);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.clear();
    const events = boxes.filter((box) => box.checked).map((box) => box.value);
    if (!url.value.trim()) return message.error('Give the endpoint a URL.');
    if (events.length === 0) return message.error('Choose at least one event.');
    try {
      const data = await busy(button, () => api('POST', '/webhooks', { url: url.value.trim(), events, description: description.value.trim() || null }), 'Adding…');
      replace(shown, secretBox(`Signing secret for ${data.webhook.url} (shown only now: keep it)`, data.webhook.secret));
      url.value = '';
      description.value = '';
      await load();
    } catch (error) {
      message.error(error);
    }
  });

  function deliveriesOf(hook, holder) {
    const load = async () => {
      const data = await api('GET', `/webhooks/${encodeURIComponent(hook.id)}/deliveries${query({ limit: 20 })}`);
      if (data.deliveries.length === 0) return replace(holder, h('p', { class: 'muted' }, 'No deliveries yet.'));
      replace(
        holder,
        h(
          'ul',
          { class: 'rows' },
          data.deliveries.map((delivery) => {
            const retry = h('button', { type: 'button', class: 'secondary small' }, 'Retry');
            retry.addEventListener('click', async () => {
              try {
                await busy(retry, () => api('POST', `/webhooks/${encodeURIComponent(hook.id)}/deliveries/${encodeURIComponent(delivery.id)}/retry`));
                await load();
              } catch (error) {
                replace(holder, h('p', { class: 'message error', role: 'alert' }, error.message));
              }
            });
            return h(
              'li',
              { class: 'row' },
              h('p', { class: 'row-title' }, h('span', { class: `badge ${delivery.status}` }, delivery.status), ` ${delivery.event} · ${delivery.attempts} attempt${delivery.attempts === 1 ? '' : 's'} · ${when(delivery.createdAt)}`),
              delivery.attemptLog.length
                ? h(
                    'ol',
                    { class: 'attempts' },
                    delivery.attemptLog.map((attempt) =>
                      h('li', {}, `#${attempt.attempt} ${when(attempt.at)}: ${attempt.outcome}${attempt.responseStatus !== null ? `, HTTP ${attempt.responseStatus}` : ''}${attempt.error ? `, ${attempt.error}` : ''} (${attempt.durationMs} ms)`),
                    ),
                  )
                : null,
              delivery.status !== 'pending' ? h('div', { class: 'actions' }, retry) : null,
            );
          }),
        ),
      );
    };
    return load;
  }

  async function load() {
    const data = await api('GET', `/webhooks${query({ limit: 100 })}`);
    if (data.webhooks.length === 0) return replace(list, h('p', { class: 'muted' }, 'No webhooks yet.'));
    replace(
      list,
      h(
        'ul',
        { class: 'rows' },
        data.webhooks.map((hook) => {
          const holder = h('div', { class: 'deliveries' });
          const showDeliveries = h('button', { type: 'button', class: 'secondary small', 'aria-expanded': 'false' }, 'Deliveries');
          showDeliveries.addEventListener('click', async () => {
            const open = showDeliveries.getAttribute('aria-expanded') === 'true';
            showDeliveries.setAttribute('aria-expanded', String(!open));
            if (open) return replace(holder);
            try {
              await deliveriesOf(hook, holder)();
            } catch (error) {
              replace(holder, h('p', { class: 'message error', role: 'alert' }, error.message));
            }
          });
          const rotate = h('button', { type: 'button', class: 'secondary small' }, 'Rotate secret');
          confirmedAction(rotate, { question: 'Rotate the signing secret? The old one keeps signing for a while.', action: 'Rotate' }, async () => {
            const data = await api('POST', `/webhooks/${encodeURIComponent(hook.id)}/rotate-secret`);
            replace(shown, secretBox(`New signing secret for ${hook.url} (shown only now: keep it)`, data.webhook.secret));
          }, message);
          const toggle = h('button', { type: 'button', class: 'secondary small' }, hook.enabled ? 'Disable' : 'Enable');
          toggle.addEventListener('click', async () => {
            try {
              await busy(toggle, () => api('PATCH', `/webhooks/${encodeURIComponent(hook.id)}`, { enabled: !hook.enabled }));
              await load();
            } catch (error) {
              message.error(error);
            }
          });
          const remove = h('button', { type: 'button', class: 'danger small' }, 'Delete');
          confirmedAction(remove, { question: `Delete the webhook to ${hook.url}?` }, async () => {
            await api('DELETE', `/webhooks/${encodeURIComponent(hook.id)}`);
            await load();
          }, message);
          return h(
            'li',
            { class: 'row' },
            h('p', { class: 'row-title' }, h('strong', { class: 'wrap' }, hook.url)),
            h(
              'p',
              { class: 'meta' },
              h('span', { class: `badge ${hook.enabled ? 'live' : 'draft'}` }, hook.enabled ? 'Enabled' : 'Disabled'),
              ` ${hook.events.join(', ')}`,
              hook.description ? ` · ${hook.description}` : '',
              hook.failingSince ? ` · failing since ${when(hook.failingSince)}` : '',
              hook.disabledReason ? ` · ${hook.disabledReason}` : '',
            ),
            h('div', { class: 'actions' }, showDeliveries, rotate, toggle, remove),
            holder,
          );
        }),
      ),
    );
  }
  await load();
}
