// The editor's feature image: pick one of the site's images (or upload one), with its alt text for this post.
import { api, query } from './api.js';
import { field, h, replace } from './ui.js';
import { ACCEPT_IMAGES, thumbnail, uploadImage } from './media.js';

const CHOICES = 60;

/** The fieldset, and `value()`: the post's `featureImage` and `featureImageAlt` as chosen. */
export async function featureImagePicker(site, post) {
  const images = site ? (await api('GET', `/media${query({ limit: CHOICES })}`).catch(() => ({ items: [] }))).items : [];
  let chosen = post ? post.featureImage : null;
  // The post's image may be older than the newest ones listed.
  if (chosen && !images.some((image) => image.id === chosen)) {
    const found = await api('GET', `/media/${encodeURIComponent(chosen)}`).catch(() => null);
    if (found) images.unshift(found.media);
  }
  const choice = h('select', {});
  const alt = h('input', { type: 'text', maxlength: 1000, value: post && post.featureImageAlt ? post.featureImageAlt : '' });
  const upload = h('input', { type: 'file', accept: ACCEPT_IMAGES });
  const shown = h('div', { class: 'feature-preview' });
  const status = h('p', { class: 'message', role: 'status' });

  function drawChoices() {
    replace(choice, h('option', { value: '' }, 'No feature image'), images.map((image) => h('option', { value: image.id, selected: image.id === chosen }, `${image.name} (${image.width} × ${image.height})`)));
    const image = images.find((candidate) => candidate.id === chosen);
    replace(shown, image && site ? thumbnail(site, image, { alt: '' }) : null);
  }
  choice.addEventListener('change', () => {
    chosen = choice.value || null;
    drawChoices();
  });
  alt.addEventListener('input', () => alt.dispatchEvent(new Event('change', { bubbles: true })));
  upload.addEventListener('change', async () => {
    const [file] = upload.files;
    if (!file) return;
    replace(status, `Uploading ${file.name}…`);
    try {
      const image = await uploadImage(file);
      images.unshift(image);
      chosen = image.id;
      drawChoices();
      // A change of the post like any other (the editor saves it).
      choice.dispatchEvent(new Event('change', { bubbles: true }));
      replace(status, `Uploaded ${file.name}: it is the feature image once the post is saved.`);
    } catch (error) {
      replace(status, `${file.name}: ${error.message}`);
    }
    upload.value = '';
  });
  drawChoices();

  const el = h(
    'fieldset',
    { class: 'feature-image' },
    h('legend', {}, 'Feature image'),
    shown,
    field('Image', choice, 'Shown at the top of the post, in lists and in link previews.'),
    field('Alt text', alt, 'What it shows, for readers who cannot see it (the image’s own alt text when empty).'),
    field('Or upload one', upload),
    status,
  );
  const value = () => ({ featureImage: chosen, featureImageAlt: alt.value.trim() === '' ? null : alt.value.trim() });
  return { el, value };
}
