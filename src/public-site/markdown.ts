import MarkdownIt from 'markdown-it';
import type { StateCore, Token } from 'markdown-it';
import type { MediaRow } from '../db/schema.js';
import { MEDIA_URL_PATTERN } from '../media/view.js';
import { slugify } from '../text/slug.js';
import { CONTENT_SIZES, srcsetOf } from './images.js';

const WORDS_PER_MINUTE = 230;

/** Ids the page layout itself uses; a heading must not take them (the skip link targets `#main`). */
const LAYOUT_IDS = ['main'];

// Markdown comes from clients and models: raw HTML is escaped, and markdown-it's validateLink keeps
// `javascript:`, `vbscript:`, `file:` and non-image `data:` URLs out of links and images.
const md = new MarkdownIt('default', { html: false, linkify: false, typographer: false });
md.core.ruler.push('site_headings_images_tables', decorateTokens);

export interface RenderedMarkdown {
  html: string;
  /** Minutes, at least 1. */
  readingTime: number;
}

/** Renders a post body once per version; the result is stored and served as is. */
export function renderMarkdown(markdown: string, images: ReadonlyMap<string, MediaRow> = new Map()): RenderedMarkdown {
  const env: MarkdownEnv = { images };
  const tokens = md.parse(markdown, env);
  const html = md.renderer.render(tokens, md.options, env);
  const words = tokens.filter((token) => token.type === 'inline' || token.type === 'fence' || token.type === 'code_block')
    .reduce((sum, token) => sum + countWords(token.type === 'inline' ? inlineText(token) : token.content), 0);
  return { html, readingTime: Math.max(1, Math.ceil(words / WORDS_PER_MINUTE)) };
}

/** What a render knows besides the Markdown: the site's images it shows (by id). */
type MarkdownEnv = {
  images: ReadonlyMap<string, MediaRow>;
}

/**
 * An image of the site's media library, linked by one of its URLs, gets its variants as
 * `srcset` (under the same address the author used) and its size, so it takes its place
 * before it loads.
 */
function decorateMediaImage(image: Token, images: ReadonlyMap<string, MediaRow>): void {
  const src = String(image.attrGet('src') ?? '');
  const id = MEDIA_URL_PATTERN.exec(src)?.[1];
  const row = id === undefined ? undefined : images.get(id);
  if (!row) return;
  const folder = src.slice(0, src.lastIndexOf('/') + 1);
  image.attrSet('srcset', srcsetOf(row, (file) => `${folder}${file}`));
  image.attrSet('sizes', CONTENT_SIZES);
  image.attrSet('width', String(row.width));
  image.attrSet('height', String(row.height));
  image.attrSet('decoding', 'async');
}

/** URL segment of a tag or category page: `/tag/<tagSlug>/`, `/category/<tagSlug>/`. */
export function tagSlug(text: string): string {
  return slugify(text);
}

/**
 * Headings get unique ids and sit under the page title, in order: the levels a post uses, by
 * rank, become h2, h3, ... (`#` and `###` become h2 and h3; a post of `##` sections has h2s),
 * so the title stays the only h1 and no level is skipped. Images load lazily; table alignment
 * becomes a class instead of an inline style, so pages need no `style` attributes.
 */
function decorateTokens(state: StateCore): void {
  const taken = new Set(LAYOUT_IDS);
  const levels = [...new Set(state.tokens.filter((token) => token.type === 'heading_open').map((token) => token.tag))].sort();
  const shifted = (tag: string) => `h${Math.min(levels.indexOf(tag) + 2, 6)}`;
  state.tokens.forEach((token, index) => {
    if (token.type === 'heading_open') {
      token.attrSet('id', uniqueId(slugify(inlineText(state.tokens[index + 1])), taken));
      token.tag = shifted(token.tag);
    } else if (token.type === 'heading_close') {
      token.tag = shifted(token.tag);
    } else if (token.type === 'th_open' || token.type === 'td_open') {
      const align = String(token.attrGet('style') ?? '').match(/^text-align:(left|center|right)$/)?.[1];
      if (align) {
        token.attrs = (token.attrs ?? []).filter(([name]) => name !== 'style');
        token.attrJoin('class', `align-${align}`);
      }
    } else if (token.type === 'inline') {
      for (const child of token.children ?? []) {
        if (child.type !== 'image') continue;
        child.attrSet('loading', 'lazy');
        decorateMediaImage(child, (state.env as Partial<MarkdownEnv>).images ?? new Map());
      }
    }
  });
}

function uniqueId(base: string, taken: Set<string>): string {
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
  taken.add(id);
  return id;
}

/** The visible text of an inline token: what a reader reads, without Markdown syntax or URLs. */
function inlineText(inline: Token): string {
  return (inline.children ?? [])
    .map((child) => {
      if (child.type === 'text' || child.type === 'code_inline') return child.content;
      if (child.type === 'softbreak' || child.type === 'hardbreak') return ' ';
      return '';
    })
    .join('');
}

function countWords(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}
