import { findLinks } from '../text/links.js';

/*
 * A comment is plain text: it is shown escaped, its paragraphs and line breaks kept and its
 * web addresses made links (http and https only, `rel="nofollow ugc noopener"`). Nothing a
 * reader types can become markup, an attribute or a script.
 */

/** Bidi embedding, override and isolate controls: dropped, so a name or body cannot reorder the text around it. */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** Text as readers see it: bidi controls and other C0/C1 controls (but tab and line ends) dropped. */
export const visibleText = (text: string) => text.replace(BIDI_CONTROLS, '').replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g, '');

/** One line's HTML: escaped, with its links. */
function lineHtml(line: string): string {
  let html = '';
  let at = 0;
  for (const link of findLinks(line)) {
    html += escapeHtml(line.slice(at, link.index));
    html += `<a href="${escapeHtml(link.url)}" rel="nofollow ugc noopener">${escapeHtml(line.slice(link.index, link.lastIndex))}</a>`;
    at = link.lastIndex;
  }
  return html + escapeHtml(line.slice(at));
}

/** A comment's body as HTML: paragraphs at blank lines, `<br>` at single line breaks. */
export function commentHtml(body: string): string {
  return visibleText(body)
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n+/)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph !== '')
    .map((paragraph) => `<p>${paragraph.split('\n').map(lineHtml).join('<br>\n')}</p>`)
    .join('\n');
}
