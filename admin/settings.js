import { api } from './api.js';
import { busy, field, h, heading, link, messageLine, replace } from './ui.js';

export async function render(main, ctx) {
  ctx.setTitle('Settings');
  let { site } = await api('GET', '/site');
  const name = h('input', { type: 'text', required: true, maxlength: 100, value: site.name });
  const handle = h('input', { type: 'text', required: true, value: site.handle, autocapitalize: 'off', spellcheck: 'false' });
  const url = h('input', { type: 'url', value: site.url || '', placeholder: 'https://blog.example.com' });
  const description = h('textarea', { rows: 3, value: site.description || '' });
  const language = h('input', { type: 'text', required: true, value: site.language, maxlength: 35 });
  const perPage = h('input', { type: 'number', min: 1, max: 100, required: true, value: String(site.postsPerPage) });
  const newsletter = site.newsletter || { enabled: false, senderName: null, replyTo: null, footer: null };
  const newsletterOn = h('input', { type: 'checkbox', id: 'newsletter-enabled', checked: newsletter.enabled });
  const senderName = h('input', { type: 'text', maxlength: 100, value: newsletter.senderName || '', placeholder: site.name });
  const replyTo = h('input', { type: 'email', maxlength: 254, value: newsletter.replyTo || '' });
  const footer = h('textarea', { rows: 2, maxlength: 500, value: newsletter.footer || '' });
  const button = h('button', { type: 'submit' }, 'Save settings');
  const message = messageLine();
  const where = h('div');

  function drawWhere() {
    const domain = site.domain;
    let verify = null;
    if (domain && domain.status === 'pending') {
      const check = h('button', { type: 'button', class: 'secondary' }, 'Verify domain');
      check.addEventListener('click', async () => {
        message.clear();
        try {
          site = (await busy(check, () => api('POST', '/site/domain/verify'))).site;
          message.ok('Domain verified.');
          drawWhere();
        } catch (error) {
          message.error(error);
        }
      });
      verify = h(
        'div',
        { class: 'card' },
        h('p', {}, `${domain.host} is not proven yet. Add this DNS TXT record, then verify:`),
        domain.verification ? h('p', {}, h('code', { class: 'wrap' }, `${domain.verification.name} TXT ${domain.verification.value}`)) : null,
        check,
      );
    }
    // The default address names this machine (localhost): readers on it use the address this page was opened at (127.0.0.1, say).
    const local = URL.canParse(site.publicUrl) && ['localhost', '127.0.0.1', '[::1]'].includes(new URL(site.publicUrl).hostname);
    const address = local ? new URL(new URL(site.publicUrl).pathname, location.origin).href : site.publicUrl;
    replace(where, h('p', {}, 'Readers find the site at ', /^https?:\/\//.test(address) ? link(address, address, { class: 'wrap' }) : h('span', { class: 'wrap' }, address), domain && domain.status === 'verified' ? ` (${domain.host} verified)` : ''), verify);
  }

  const form = h(
    'form',
    { class: 'card' },
    field('Name', name),
    field('Handle', handle, 'Pages live at /sites/<handle>/.'),
    field('URL', url, 'The site’s own domain, optional; it serves the site once proven by DNS.'),
    field('Description', description),
    h('div', { class: 'grid' }, field('Language', language, 'A language tag such as en or en-GB.'), field('Posts per page', perPage)),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Newsletter'),
      h('div', { class: 'check' }, newsletterOn, h('label', { for: 'newsletter-enabled' }, 'Readers can subscribe, and new posts are mailed to them')),
      h('div', { class: 'grid' }, field('Sender', senderName, 'The From name of the mails; the site’s name when empty.'), field('Reply-To', replyTo, 'Where replies go, optional.')),
      field('Footer', footer, 'A line at the foot of every newsletter.'),
    ),
    message.el,
    h('div', { class: 'actions' }, button),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.clear();
    const body = {
      name: name.value.trim(),
      handle: handle.value.trim(),
      url: url.value.trim() || null,
      description: description.value.trim() || null,
      language: language.value.trim(),
      postsPerPage: Number(perPage.value),
      newsletter: { enabled: newsletterOn.checked, senderName: senderName.value.trim() || null, replyTo: replyTo.value.trim() || null, footer: footer.value.trim() || null },
    };
    try {
      site = (await busy(button, () => api('PATCH', '/site', body), 'Saving…')).site;
      message.ok('Settings saved.');
      drawWhere();
    } catch (error) {
      message.error(error);
    }
  });
  drawWhere();
  main.append(heading('Settings'), where, form);
}
