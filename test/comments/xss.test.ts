/**
 * Hostile comment names and bodies (script tags, javascript: and data: URLs, attribute and
 * element breakouts, Unicode bidi controls) on every place readers see them: the post page
 * (approved comments, the reply form, the form shown again with a bad field) and the content
 * API's HTML. The pages are parsed as a browser would and searched for anything executable.
 */
import { type Document, type Element } from 'domhandler';
import { findAll, getAttributeValue, textContent } from 'domutils';
import { parseDocument } from 'htmlparser2';
import t, { type Test } from 'tap';
import { buildTestApp } from '../helpers/app.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
/** The only scripts a post page may load: the service's own comment-form modules, and JSON-LD data. */
const SERVICE_SCRIPTS = new Set(['/spam-guard/spam-guard.js', '/spam-guard/comments.js']);
const BIDI = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/;
const URL_ATTRIBUTES = ['href', 'src', 'action', 'formaction', 'srcset', 'data', 'poster', 'xlink:href', 'challenge', 'data-api'];

const NAMES = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "' onmouseover='alert(1)' x='",
  '\u202Egnp.exe\u202C Mallory',
  '</bdi><script>alert(2)</script>',
  'Eve\u2066\u2067\u2068\u2069\u200F\u200E',
  '<svg onload=alert(1)>',
];
const BODIES = [
  '<script>alert(1)</script>',
  '[click](javascript:alert(1))',
  'javascript:alert(1)',
  '<a href="javascript:alert(1)" onclick="x()">raw</a>',
  'https://example.org/"onmouseover="alert(1)',
  "https://example.org/'><script>alert(3)</script>",
  'http://example.org/a?<svg/onload=alert(1)>',
  'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
  '</textarea><script>alert(4)</script>',
  '\u202Ecod.exe and \u2067RTL\u2069',
  '![x](https://example.org/a.png) <img src=x onerror=alert(5)>',
  '<!-- <style>*{display:none}</style> ]]> &lt;b&gt;',
  'JaVaScRiPt:alert(1) vbscript:msgbox(1) //evil.example',
];

/** Everything executable or misleading a parsed page holds, as a list of findings (empty: none). */
function findings(document: Document, where: string): string[] {
  const found: string[] = [];
  const elements = findAll(() => true, document.children) as Element[];
  for (const element of elements) {
    for (const [name, value] of Object.entries(element.attribs)) {
      if (/^on/i.test(name)) found.push(`${where}: <${element.name} ${name}>`);
      if (URL_ATTRIBUTES.includes(name.toLowerCase()) && !/^(?:https?:\/\/|\/(?!\/)|#|\?|$)/i.test(value.trim())) found.push(`${where}: <${element.name} ${name}="${value}">`);
    }
    if (element.name === 'script') {
      const src = getAttributeValue(element, 'src');
      const isData = getAttributeValue(element, 'type') === 'application/ld+json' && src === undefined;
      if (!isData && !(src !== undefined && SERVICE_SCRIPTS.has(src) && textContent(element) === '')) found.push(`${where}: <script${src ? ` src=${src}` : ''}>${textContent(element).slice(0, 40)}`);
    }
    if (['iframe', 'object', 'embed', 'svg', 'math', 'img', 'style', 'base', 'meta'].includes(element.name) && isInsideComment(element)) found.push(`${where}: <${element.name}> in a comment`);
    if (element.name === 'a' && isInsideComment(element) && element.attribs.rel !== 'nofollow ugc noopener') found.push(`${where}: a comment's link without rel="nofollow ugc noopener"`);
  }
  if (BIDI.test(textContent(document))) found.push(`${where}: a bidi control in the text`);
  return found;
}

function isInsideComment(element: Element): boolean {
  for (let node = element.parent; node; node = node.parent) {
    if ((node as Element).attribs?.class?.split(' ').includes('comment-body')) return true;
  }
  return false;
}

const parse = (html: string) => parseDocument(html, { decodeEntities: true });

t.test('hostile names and bodies: nothing executable on the page, in the reply form, in the form shown again, in the content API', async (t: Test) => {
  const ctx = await buildTestApp(t, { SPAM_GUARD_DIFFICULTY: '100', SPAM_GUARD_MIN_FILL_SECONDS: '0', SPAM_GUARD_RATE_MAX: '0' });
  const post = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Open thread', content: 'Say anything.', isDraft: false } })).json().data.post;
  const page = `/sites/my-blog/${post.slug}/`;
  const api = `/content/v1/sites/my-blog/posts/${post.slug}/comments`;

  // Every name with every body, through the content API, then approved.
  const ids: string[] = [];
  for (const [i, body] of BODIES.entries()) {
    const name = NAMES[i % NAMES.length]!;
    const sent = await ctx.app.inject({ method: 'POST', url: api, payload: { name, email: 'x@example.com', body } });
    t.equal(sent.statusCode, 201, `sent: ${JSON.stringify(body)}`);
    ids.push(sent.json().data.comment.id);
  }
  for (const id of ids) await ctx.call({ method: 'PATCH', url: `/api/v1/comments/${id}`, payload: { status: 'approved' } });
  // A reply under the first, by the last name.
  const reply = await ctx.app.inject({ method: 'POST', url: api, payload: { name: NAMES.at(-1), body: BODIES[0], parentId: ids[0] } });
  await ctx.call({ method: 'PATCH', url: `/api/v1/comments/${reply.json().data.comment.id}`, payload: { status: 'approved' } });

  const html = (await ctx.call({ method: 'GET', url: page, key: null })).body;
  const document = parse(html);
  t.same(findings(document, 'post page'), []);
  const bodies = findAll((element) => element.attribs.class === 'comment-body', document.children);
  t.equal(bodies.length, BODIES.length + 1, 'every comment shown');
  t.equal(textContent(bodies[0]!).trim(), '<script>alert(1)</script>', 'a script is shown as the text typed');
  const links = findAll((element) => element.name === 'a' && isInsideComment(element), document.children).map((a) => a.attribs.href);
  t.ok(links.length > 0 && links.every((href) => /^https?:\/\//.test(href!)), `only http(s) links: ${links.join(' ')}`);
  const authors = findAll((element) => element.attribs.class === 'comment-author', document.children).map((element) => textContent(element));
  t.ok(authors.includes('<script>alert(1)</script>'), 'a name is shown as the text typed');
  t.ok(authors.includes('gnp.exe Mallory'), 'a bidi override is dropped from a name');

  // The reply form names who is answered.
  const replying = parse((await ctx.call({ method: 'GET', url: `${page}?replyTo=${ids[1]}`, key: null })).body);
  t.same(findings(replying, 'reply form'), []);
  t.match(textContent(replying), `Replying to ${NAMES[1]}`);

  // The form shown again with a bad field keeps every hostile value as text.
  for (const [i, name] of NAMES.entries()) {
    const body = BODIES[i]!;
    const again = await ctx.call({ method: 'POST', url: `${page}comments`, key: null, headers: FORM, payload: new URLSearchParams({ name, email: `${body}@`, body, parentId: `"><script>alert(${i})</script>` }).toString() });
    t.equal(again.statusCode, 400, `shown again: ${JSON.stringify(name)}`);
    const shown = parse(again.body);
    t.same(findings(shown, `form again ${i}`), []);
    const [textarea] = findAll((element) => element.name === 'textarea', shown.children);
    // A textarea's text is RCDATA: only its own end tag could end it, and none is left raw.
    const raw = textContent(textarea!);
    t.notMatch(raw, /<\/textarea/i);
    t.equal(textContent(parse(`<p>${raw}</p>`)), body, 'the body typed, kept as text');
    const [nameInput] = findAll((element) => element.attribs.name === 'name', shown.children);
    t.equal(nameInput!.attribs.value, name, 'the name typed, kept as a value');
  }

  // The content API's HTML is the page's: the same checks.
  const listed = (await ctx.call({ method: 'GET', url: `${api}?limit=100`, key: null })).json().data.comments as { authorName: string; html: string }[];
  t.equal(listed.length, BODIES.length + 1);
  for (const comment of listed) {
    t.same(findings(parse(`<div class="comment-body">${comment.html}</div>`), 'content API'), []);
    t.notMatch(comment.authorName, BIDI);
  }
});
