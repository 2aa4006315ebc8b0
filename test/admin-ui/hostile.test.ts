import t from 'tap';
import { buildTestApp } from '../helpers/app.js';
import { invite, noChromium, openBrowser, setUp } from '../helpers/browser.js';

/**
 * Posts written to attack whoever looks at them (a client or a model can write anything) stay
 * text in every admin screen: no script, event handler or javascript: link runs, in the list,
 * the editor or the preview.
 */
const PWN = 'window.__pwned = (window.__pwned || 0) + 1';
const HOSTILE = {
  title: `<img src=x onerror="${PWN}; alert('title')"><script>${PWN}; alert('title')</script>`,
  description: `<svg onload="${PWN}; alert('description')"></svg>`,
  content: [
    '# Innocent heading',
    `<script>${PWN}; alert('content')</script>`,
    `<img src=x onerror="${PWN}; alert('img')">`,
    `[click me](javascript:${encodeURIComponent(PWN)})`,
    `<a href="javascript:${PWN}">raw link</a>`,
    `![pic](javascript:${encodeURIComponent(PWN)})`,
    `<iframe src="javascript:${PWN}"></iframe>`,
    `<details open ontoggle="${PWN}">x</details>`,
  ].join('\n\n'),
  category: '"><img src=x onerror="alert(1)">',
  tags: ['<b onmouseover="alert(1)">tag</b>'],
};

t.test('hostile post content never runs in the admin UI', { skip: noChromium }, async (t) => {
  const ctx = await buildTestApp(t);
  const created = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { ...HOSTILE, isDraft: true } });
  t.equal(created.statusCode, 201, created.body);
  const postId = created.json().data.post.id;
  const token = await invite(t, ctx, 'owner@example.com');
  const b = await openBrowser(t, ctx);
  const { page, origin } = b;
  await setUp(b, token);

  /** Elements in the page carrying an event-handler attribute, script elements in main, and javascript: URLs. */
  const injected = () =>
    page.evaluate(() => {
      // The editor's preview frames the public page (same origin): what it holds is checked too.
      const framed = (document.querySelector('iframe.preview-frame') as HTMLIFrameElement | null)?.contentDocument ?? null;
      const all = [...document.querySelectorAll('*'), ...(framed ? framed.querySelectorAll('*') : [])];
      const framedWindow = (document.querySelector('iframe.preview-frame') as HTMLIFrameElement | null)?.contentWindow as unknown as { __pwned?: number } | null;
      return {
        handlers: all.filter((el) => [...el.attributes].some((attr) => attr.name.startsWith('on'))).map((el) => el.outerHTML.slice(0, 80)),
        // The UI's own charts (admin/chart.js, drawn with DOM calls) are the one SVG it makes; its preview frame the one iframe.
        scripts: [
          ...document.querySelectorAll('main script, main iframe:not(.preview-frame), main svg:not(figure.stats-chart > svg.chart)'),
          ...(framed ? framed.querySelectorAll('script, iframe, main svg') : []),
        ].map((el) => el.outerHTML.slice(0, 80)),
        jsUrls: all.filter((el) => [...el.attributes].some((attr) => /^\s*javascript:/i.test(attr.value))).map((el) => el.outerHTML.slice(0, 80)),
        pwned: ((window as unknown as { __pwned?: number }).__pwned ?? 0) + (framedWindow?.__pwned ?? 0),
      };
    });
  const clean = { handlers: [], scripts: [], jsUrls: [], pwned: 0 };

  // The list shows the title as text.
  await page.getByRole('link', { name: HOSTILE.title }).waitFor();
  t.ok(await page.getByText(HOSTILE.tags[0]).isVisible(), 'the tag shows as text');
  t.same(await injected(), clean, 'the post list: nothing injected, nothing ran');

  // The editor: fields hold the text, the preview holds the server-sanitised HTML.
  await page.getByRole('link', { name: HOSTILE.title }).click();
  await page.waitForURL(`${origin}/admin/posts/${postId}`);
  // The preview is the public page, framed: its body is what the post's text made.
  const preview = page.getByRole('region', { name: 'Preview' }).frameLocator('iframe').locator('.post-body');
  await preview.getByRole('heading', { name: 'Innocent heading' }).waitFor();
  t.equal(await page.getByLabel('Title').inputValue(), HOSTILE.title, 'the title field holds the text as it is');
  t.equal(await page.getByLabel('Category').inputValue(), HOSTILE.category);
  t.ok(await preview.getByText(`<script>${PWN}; alert('content')</script>`).isVisible(), 'raw HTML shows as text in the preview');
  t.equal(await preview.getByRole('link').count(), 0, 'no javascript: link made it into the preview');
  // Clicking where the link text is does nothing either.
  await preview.getByText('click me').click();
  t.same(await injected(), clean, 'the editor and preview: nothing injected, nothing ran');

  // Typing more hostile Markdown into the editor previews it inert too.
  await page.getByLabel('Content').fill(`${HOSTILE.content}\n\n## Typed <img src=x onerror="${PWN}">`);
  await preview.getByRole('heading', { name: /^Typed/ }).waitFor();
  t.same(await injected(), clean, 'the preview of typed Markdown (autosaved): nothing ran');
  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.getByText('Draft saved.').waitFor();
  t.same(await injected(), clean, 'after saving: nothing ran');

  // A comment written to attack its moderator, on a published post: text on the Comments screen.
  const published = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: HOSTILE.title, isDraft: false } })).json().data.post;
  const name = `<img src=x onerror="${PWN}">`;
  const body = `${HOSTILE.content}\n\nhttps://example.org/"onmouseover="${PWN}" \u202Eevil`;
  const comment = await ctx.app.inject({ method: 'POST', url: `/content/v1/sites/my-blog/posts/${published.slug}/comments`, payload: { name, body } });
  t.equal(comment.statusCode, 201, comment.body);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /^Comments/ }).click();
  await page.locator('.comment-author', { hasText: name }).waitFor();
  t.ok(await page.locator('li.comment').getByRole('link', { name: HOSTILE.title }).isVisible(), 'the post title shows as text');
  t.same(await injected(), clean, 'the Comments screen: nothing injected, nothing ran');

  t.same(b.dialogs, [], 'no dialog opened');
  t.same(b.problems, [], 'no console errors, page errors or failed requests');
});
