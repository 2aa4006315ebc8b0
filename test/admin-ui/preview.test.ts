import t from 'tap';
import { buildTestApp } from '../helpers/app.js';
import { renderMarkdown } from '../../src/public-site/markdown.js';

/** POST /api/v1/posts/preview: the editor's preview, rendered exactly as the public page renders a post body. */
t.test('preview renders Markdown as the public page does', async (t) => {
  const ctx = await buildTestApp(t);
  const content = '# Start here\n\nUse **60 grams** per litre.\n\n## Then\n\n- one\n- two\n';
  const res = await ctx.call({ method: 'POST', url: '/api/v1/posts/preview', payload: { content } });
  t.equal(res.statusCode, 200);
  const { html, readingTime } = res.json().data;
  t.equal(html, renderMarkdown(content).html, 'the same HTML the public renderer makes');
  t.match(html, /<h2 id="start-here">Start here<\/h2>/, 'the first heading level becomes h2 under the page title');
  t.match(html, /<strong>60 grams<\/strong>/);
  t.equal(readingTime, 1);

  // Created and then shown publicly: the page holds the very same body HTML.
  const created = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Preview check', content, isDraft: false } });
  t.equal(created.statusCode, 201);
  const { handle } = (await ctx.call({ method: 'GET', url: '/api/v1/site' })).json().data.site;
  const page = await ctx.call({ method: 'GET', url: `/sites/${handle}/${created.json().data.post.slug}/`, key: null });
  t.equal(page.statusCode, 200);
  t.ok(page.body.includes(html.trim()), 'the public page holds the preview HTML');

  const empty = await ctx.call({ method: 'POST', url: '/api/v1/posts/preview', payload: { content: '' } });
  t.equal(empty.statusCode, 200);
  t.equal(empty.json().data.html, '', 'empty Markdown previews as nothing');
});

t.test('hostile Markdown previews inert', async (t) => {
  const ctx = await buildTestApp(t);
  const content = [
    '<script>alert(1)</script>',
    '<img src=x onerror="alert(2)">',
    '[click](javascript:alert(3))',
    '[data](data:text/html;base64,PHNjcmlwdD5hbGVydCg0KTwvc2NyaXB0Pg==)',
    '![pic](javascript:alert(5))',
    '<a href="javascript:alert(6)">raw</a>',
    '[vb](vbscript:msgbox(7))',
    '<iframe src="https://example.com"></iframe>',
    '<svg onload="alert(8)"></svg>',
  ].join('\n\n');
  const res = await ctx.call({ method: 'POST', url: '/api/v1/posts/preview', payload: { content } });
  t.equal(res.statusCode, 200);
  const { html } = res.json().data;
  t.notMatch(html, /<script/i, 'no script element');
  t.notMatch(html, /<(img|a|iframe|svg)\b[^>]*\son\w+=/i, 'no event handler attribute on an element');
  t.notMatch(html, /<iframe|<svg/i, 'no iframe or svg element');
  t.notMatch(html, /href="\s*(javascript|vbscript|data):/i, 'no script URL in a link');
  t.notMatch(html, /src="\s*javascript:/i, 'no script URL in an image');
  t.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/, 'raw HTML shows as text');
});

t.test('preview input is checked', async (t) => {
  const ctx = await buildTestApp(t);
  const missing = await ctx.call({ method: 'POST', url: '/api/v1/posts/preview', payload: {} });
  t.equal(missing.statusCode, 400);
  t.equal(missing.json().success, false);
  t.equal(missing.json().error.code, 'VALIDATION_ERROR');
  const wrong = await ctx.call({ method: 'POST', url: '/api/v1/posts/preview', payload: { content: 42 } });
  t.equal(wrong.statusCode, 400);
  const long = await ctx.call({ method: 'POST', url: '/api/v1/posts/preview', payload: { content: 'x'.repeat(1_000_001) } });
  t.equal(long.statusCode >= 400 && long.statusCode < 500, true, `too long is a 4xx (${long.statusCode})`);
  const anonymous = await ctx.call({ method: 'POST', url: '/api/v1/posts/preview', payload: { content: '# hi' }, key: null });
  t.equal(anonymous.statusCode, 401, 'needs authentication');
});
