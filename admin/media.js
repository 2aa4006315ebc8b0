import { api, query } from './api.js';
import { busy, confirmedAction, field, fileDrop, h, heading, messageLine, pager, replace, when } from './ui.js';

const DIALOG_CHOICES = 48;

export const ACCEPT_IMAGES = 'image/jpeg,image/png,image/webp,image/gif,image/avif';
const PAGE_SIZE = 24;

/** An image file's path on this server, whatever address the site's readers use: /sites/<handle>/media/<id>/<file>. */
export function mediaSrc(site, url) {
  const match = /\/media\/([^/]+)\/([^/]+)$/.exec(new URL(url, location.href).pathname);
  return match ? `/sites/${encodeURIComponent(site.handle)}/media/${match[1]}/${match[2]}` : url;
}

/** The narrowest variant at least `width` wide (else the original), for a thumbnail. */
export function thumbnailUrl(site, media, width = 300) {
  const webp = media.variants.filter((v) => v.format === 'webp' && v.width >= width).sort((a, b) => a.width - b.width)[0];
  return mediaSrc(site, webp ? webp.url : media.url);
}

/** A picture of the library as a small thumbnail with its size given up front. */
export function thumbnail(site, media, attrs = {}) {
  return h('img', { src: thumbnailUrl(site, media), alt: media.alt || '', width: media.width, height: media.height, loading: 'lazy', decoding: 'async', class: 'thumb', ...attrs });
}

// The image's path on this server (not an absolute URL): it shows on whatever address the admin or the site is opened at.
const markdownOf = (site, media) => `![${(media.alt || media.name).replace(/[[\]]/g, '')}](${mediaSrc(site, media.url)})`;

/**
 * "Insert image": the library's newest images to pick from, or a file to upload. Resolves to the
 * image chosen (as the API shows it), or null when closed.
 */
export function insertImageDialog(site) {
  return new Promise((resolve) => {
    const grid = h('ul', { class: 'media-grid pick' }, h('li', { class: 'muted' }, 'Loading images…'));
    const file = h('input', { type: 'file', accept: ACCEPT_IMAGES });
    const status = h('p', { class: 'message', role: 'status' });
    const close = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
    const dialog = h(
      'dialog',
      { class: 'picker', 'aria-labelledby': 'picker-title' },
      h('h2', { id: 'picker-title' }, 'Insert image'),
      field('Upload an image', file, 'JPEG, PNG, WebP, GIF or AVIF, up to 20 MB.'),
      status,
      h('h3', {}, 'Or choose one of the library'),
      grid,
      h('div', { class: 'actions' }, close),
    );
    let chosen = null;
    const done = (image) => {
      chosen = image;
      dialog.close();
    };
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(chosen);
    });
    close.addEventListener('click', () => done(null));
    file.addEventListener('change', async () => {
      const [picked] = file.files;
      if (!picked) return;
      replace(status, `Uploading ${picked.name}…`);
      try {
        done(await uploadImage(picked));
      } catch (error) {
        status.className = 'message error';
        replace(status, `${picked.name}: ${error.message}`);
      }
    });
    document.body.append(dialog);
    dialog.showModal();
    api('GET', `/media${query({ limit: DIALOG_CHOICES })}`).then(
      (data) => {
        if (data.items.length === 0) return replace(grid, h('li', { class: 'muted' }, 'No images yet: upload one.'));
        replace(
          grid,
          data.items.map((media) => {
            const pick = h('button', { type: 'button', class: 'pick-image', 'aria-label': `Insert ${media.name}` }, thumbnail(site, media, { alt: '' }));
            pick.addEventListener('click', () => done(media));
            return h('li', {}, pick);
          }),
        );
      },
      (error) => replace(grid, h('li', { class: 'message error' }, error.message)),
    );
  });
}

/** Asks for an image's alt text (its own, if it has one, to start from); the image's library alt text is set when it had none. */
export function askAltText(media) {
  return new Promise((resolve) => {
    const input = h('input', { type: 'text', maxlength: 1000, value: media.alt || '', required: true });
    const dialog = h(
      'dialog',
      { class: 'confirm', 'aria-labelledby': 'alt-q' },
      h(
        'form',
        { method: 'dialog' },
        h('p', { id: 'alt-q' }, `Describe “${media.name}” for readers who cannot see it.`),
        field('Alt text', input, 'Leave empty only for a purely decorative image.'),
        h('div', { class: 'actions' }, h('button', { value: 'ok' }, 'Insert')),
      ),
    );
    dialog.addEventListener('close', () => {
      const alt = input.value.trim();
      dialog.remove();
      if (alt && !media.alt) void api('PATCH', `/media/${encodeURIComponent(media.id)}`, { alt }).catch(() => {});
      resolve(alt);
    });
    document.body.append(dialog);
    dialog.showModal();
    input.select();
  });
}

/** Uploads one image; resolves to the image as the API shows it. */
export async function uploadImage(file) {
  const form = new FormData();
  form.append('file', file, file.name);
  return (await api('POST', '/media', form)).media;
}

/** /admin/media: the site's images, uploaded here, with their alt text and a Markdown snippet to copy. */
export async function render(main, ctx) {
  ctx.setTitle('Media');
  const site = (await api('GET', '/site')).site;
  const page = Math.max(1, Number(ctx.search.get('page')) || 1);
  const message = messageLine();
  const input = h('input', { type: 'file', accept: ACCEPT_IMAGES, multiple: true });
  const drop = h('div', { class: 'drop' }, field('Upload an image', input, 'JPEG, PNG, WebP, GIF or AVIF, up to 20 MB. Or drop images here. Location and camera data are removed.'));
  const list = h('div', { 'aria-live': 'polite' });
  main.append(heading('Media'), h('p', {}, 'Images for feature images and post bodies, resized for every screen.'), drop, message.el, list);

  async function load() {
    const data = await api('GET', `/media${query({ page, limit: PAGE_SIZE })}`);
    if (data.items.length === 0) return replace(list, h('p', { class: 'muted' }, 'No images yet.'));
    replace(list, h('ul', { class: 'media-grid' }, data.items.map(card)), pager(data.pagination, (n) => `/admin/media${query({ page: n })}`));
  }

  function card(media) {
    const alt = h('input', { type: 'text', maxlength: 1000, value: media.alt });
    const saveAlt = h('button', { type: 'submit', class: 'secondary small' }, 'Save alt text');
    const altForm = h('form', { class: 'alt-form' }, field('Alt text', alt, 'What the picture shows, for readers who cannot see it.'), saveAlt);
    altForm.addEventListener('submit', async (event) => {
      event.preventDefault();
      try {
        media = (await busy(saveAlt, () => api('PATCH', `/media/${encodeURIComponent(media.id)}`, { alt: alt.value }), 'Saving…')).media;
        markdown.value = markdownOf(site, media);
        message.ok(`Saved the alt text of ${media.name}.`);
      } catch (error) {
        message.error(error);
      }
    });
    const markdown = h('input', { type: 'text', readOnly: true, value: markdownOf(site, media) });
    const remove = h('button', { type: 'button', class: 'danger small', 'aria-label': `Delete ${media.name}` }, 'Delete');
    confirmedAction(remove, { question: `Delete “${media.name}”? Posts showing it as their feature image lose it.` }, async () => {
      await api('DELETE', `/media/${encodeURIComponent(media.id)}`);
      message.ok(`Deleted ${media.name}.`);
      await load();
    }, message);
    return h(
      'li',
      { class: 'media-card' },
      thumbnail(site, media),
      h('p', { class: 'row-title' }, h('strong', {}, media.name)),
      h('p', { class: 'meta' }, `${media.width} × ${media.height} · ${media.format.toUpperCase()} · ${when(media.createdAt)}`),
      altForm,
      field('Markdown', markdown, 'Paste into a post to show the image.'),
      h('div', { class: 'actions' }, remove),
    );
  }

  async function upload(files) {
    message.clear();
    for (const file of files) {
      try {
        message.ok(`Uploading ${file.name}…`);
        await uploadImage(file);
        message.ok(`Uploaded ${file.name}.`);
      } catch (error) {
        message.error(new Error(`${file.name}: ${error.message}`));
      }
    }
    input.value = '';
    await load();
  }

  fileDrop(drop, input, upload);
  await load();
}
