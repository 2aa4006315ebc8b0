import { Eta } from 'eta';
import type { Site } from '../db/schema.js';
import type { MailMessage } from '../mail/rules.js';
import { renderMail } from '../mail/render.js';
import { viewsFolder } from '../public-site/templates.js';
import type { PublicPost, PublicSite } from '../public-site/types.js';
import { postUrl } from '../public-site/urls.js';
import { featureImageOf } from '../public-site/images.js';

/*
 * The mails of newsletters: a post as its subscribers receive it (the public renderer's body,
 * images with absolute URLs and bounded in width, a link to its page, a plain-text part, a
 * personal unsubscribe link in the headers and in sight), and the confirmation of a sign-up.
 * No tracking pixel and no rewritten link: every link is the post's own.
 */

/** Where an unsubscribe link points: the page asks to confirm on GET; a POST (RFC 8058's one click) acts at once. */
export const unsubscribeUrl = (site: PublicSite, token: string) => `${site.baseUrl}/unsubscribe?token=${encodeURIComponent(token)}`;
export const confirmUrl = (site: PublicSite, token: string) => `${site.baseUrl}/subscribe/confirm?token=${encodeURIComponent(token)}`;

/** A post's mail before it is made personal: what every recipient's message shares. */
export interface NewsletterTemplate {
  subject: string;
  /** The parts with the unsubscribe link's place marked (filled per recipient). */
  html: string;
  text: string;
  replyTo?: string;
}

const TOKEN_MARK = '\u0000unsubscribe\u0000';

let engines: { html: Eta; text: Eta } | null = null;
function templates() {
  const views = viewsFolder();
  engines ??= {
    html: new Eta({ views, autoEscape: true, cache: true }),
    text: new Eta({ views, autoEscape: false, autoTrim: false, cache: true }),
  };
  return engines;
}

/** Makes every site-relative address in the HTML absolute (mail has no page to be relative to). */
export function absoluteUrls(html: string, origin: string): string {
  const absolute = (url: string) => (url.startsWith('/') && !url.startsWith('//') ? origin + url : url);
  return html
    .replace(/\b(src|href)="([^"]*)"/g, (_all, name: string, url: string) => `${name}="${absolute(url)}"`)
    .replace(/\bsrcset="([^"]*)"/g, (_all, set: string) => `srcset="${set.split(',').map((entry) => {
      const [url, ...rest] = entry.trim().split(/\s+/);
      return [absolute(url ?? ''), ...rest].join(' ');
    }).join(', ')}"`)
    // Bounded in width by the mail's column, whatever the image's own size.
    .replace(/<img /g, '<img style="max-width:100%;height:auto" ');
}

/** Plain text of the rendered body: paragraphs kept, tags dropped, entities read. */
export function plainText(html: string): string {
  return html
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, '')
    .replace(/<img [^>]*alt="([^"]*)"[^>]*>/gi, '[$1]')
    .replace(/<a [^>]*href="([^"]*)"[^>]*>([\s\S]*?)<\/a>/gi, (_all, href: string, label: string) => `${label} (${href})`)
    .replace(/<li[^>]*>/gi, '- ')
    .replace(/<\/(p|h[1-6]|li|pre|blockquote|tr)>|<br\s*\/?>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The shared part of a post's newsletter. */
export function newsletterTemplate(site: Site, view: PublicSite, post: PublicPost): NewsletterTemplate {
  const origin = new URL(view.baseUrl).origin;
  const url = postUrl(view, post.slug);
  const html = absoluteUrls(post.html, origin);
  const feature = featureImageOf(view, post);
  // The shared size (at most 1,600 px wide), absolute: the page's own src may be relative.
  const image = feature ? { src: feature.share.url, alt: feature.alt } : null;
  const data = { language: site.language, siteName: site.name, title: post.title, url, html, image, text: plainText(html), footer: site.newsletterFooter, unsubscribeUrl: TOKEN_MARK };
  const { html: htmlEngine, text: textEngine } = templates();
  return {
    subject: post.title.replace(/[\r\n]+/g, ' ').slice(0, 300),
    html: htmlEngine.render('./mail/newsletter', data),
    text: textEngine.render('./mail/newsletter-text', data).replace(/\n{3,}/g, '\n\n'),
    ...(site.newsletterReplyTo ? { replyTo: site.newsletterReplyTo } : {}),
  };
}

/** A part of the template cut where the recipient's unsubscribe link goes. */
export const linkSegments = (part: string): string[] => part.split(TOKEN_MARK);

/** A recipient's unsubscribe link as each place of their message shows it. */
export function unsubscribeLinks(view: PublicSite, unsubscribeToken: string): { text: string; html: string; header: string } {
  const link = unsubscribeUrl(view, unsubscribeToken);
  return { text: link, html: link.replaceAll('&', '&amp;'), header: `<${link}>` };
}

/** One recipient's message: their own unsubscribe link in sight and in the RFC 8058 headers (a newsletter's send splices it into raw MIME instead: mime.ts). */
export function personalMessage(template: NewsletterTemplate, view: PublicSite, to: string, unsubscribeToken: string): MailMessage {
  const links = unsubscribeLinks(view, unsubscribeToken);
  return {
    to,
    subject: template.subject,
    html: linkSegments(template.html).join(links.html),
    text: linkSegments(template.text).join(links.text),
    ...(template.replyTo ? { replyTo: template.replyTo } : {}),
    headers: { 'List-Unsubscribe': links.header, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  };
}

/** The confirmation of a sign-up: one link, good for 7 days. */
export function confirmationMessage(site: Site, view: PublicSite, email: string, token: string): MailMessage {
  const link = confirmUrl(view, token);
  const content = renderMail({
    subject: `Confirm your subscription to ${site.name}`.replace(/[\r\n]+/g, ' ').slice(0, 300),
    heading: `Confirm your subscription to ${site.name}`,
    paragraphs: [`Someone, hopefully you, asked for new posts of ${site.name} by email at ${email}.`, 'Confirm with the button below; the link works for 7 days. If it was not you, ignore this mail: nothing will be sent.'],
    action: { label: 'Confirm my subscription', url: link },
    language: site.language,
  });
  return { to: email, ...content };
}

/** The From header of a site's newsletters: its sender name (or the site's name) with MAIL_FROM's address. */
export function fromHeader(site: Site, mailFrom: string): { name: string; address: string } {
  const address = /<([^>]+)>\s*$/.exec(mailFrom)?.[1] ?? mailFrom;
  return { name: (site.newsletterSenderName ?? site.name).replace(/[\r\n"<>]+/g, ' ').trim(), address };
}

/** A test of a post's newsletter, to one staff address: the same mail, its subject marked, its unsubscribe link a dead one. */
export function testMessage(site: Site, view: PublicSite, post: PublicPost, to: string): MailMessage {
  const message = personalMessage(newsletterTemplate(site, view, post), view, to, 'test');
  return { ...message, subject: `[Test] ${message.subject}`.slice(0, 300) };
}
