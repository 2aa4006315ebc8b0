import { Eta } from 'eta';
import { viewsFolder } from '../public-site/templates.js';

/*
 * The house layout of outgoing mail: one content, rendered as the HTML part and as the plain
 * text part by the templates beside the public site's (views/mail/), so both say the same.
 */

export interface MailContent {
  subject: string;
  heading?: string;
  /** Paragraphs of plain text (escaped in the HTML part). */
  paragraphs: string[];
  /** One button (and its address spelled out): the link the message is about. */
  action?: { label: string; url: string };
  /** A last line in small print: why the person gets this message. */
  footer?: string;
  /** The `lang` of the HTML part. */
  language?: string;
}

let engines: { html: Eta; text: Eta } | null = null;

function templates() {
  const views = viewsFolder();
  engines ??= {
    html: new Eta({ views, autoEscape: true, cache: true }),
    // Plain text is not HTML: nothing to escape; the template prints with `<%~`.
    text: new Eta({ views, autoEscape: false, autoTrim: false, cache: true }),
  };
  return engines;
}

/** The subject and both parts of a message, ready for `mail.enqueue`. */
export function renderMail(content: MailContent): { subject: string; text: string; html: string } {
  const data = { heading: null, action: null, footer: null, language: 'en', ...content };
  const { html, text } = templates();
  return {
    subject: content.subject,
    html: html.render('./mail/message', data),
    text: text.render('./mail/message-text', data).replace(/\n{3,}/g, '\n\n').trim() + '\n',
  };
}
