import { randomUUID } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer';
import { foldLines } from 'nodemailer/lib/mime-funcs';
import MimeNode from 'nodemailer/lib/mime-node';
import { encode as qpEncode, wrap as qpWrap } from 'nodemailer/lib/qp';
import type { PublicSite } from '../public-site/types.js';
import { linkSegments, unsubscribeLinks, type NewsletterTemplate } from './message.js';

/*
 * A post's newsletter as the SMTP server receives it. Nodemailer composes the message once per
 * send, with slots where one recipient's message differs from another's; each recipient's
 * message is then that text with their To, Message-ID and List-Unsubscribe headers before it
 * and their unsubscribe link spliced into both parts (each part quoted-printable, encoded once
 * around the link's places). Composing a message anew per recipient cost more time than
 * sending it.
 */

/** A composed newsletter: Nodemailer's message cut at its slots, each part encoded around the link's places. */
export interface ComposedNewsletter {
  /** When it was composed (its Date header). */
  at: number;
  /** The envelope's sender. */
  from: string;
  /** The message cut at the Message-ID's local part, then at the text part, then at the HTML part. */
  pieces: [string, string, string, string];
  /** Each part quoted-printable, cut where the link goes. */
  text: string[];
  html: string[];
}

/** A message ready for the SMTP server: the envelope and the message itself. */
export interface RawMail {
  envelope: { from: string; to: string[] };
  raw: string;
}

// Plain words: quoted-printable keeps them as they are, and no line is long enough to wrap.
const SLOTS = ['newsletter-message-id-slot', 'newsletter-text-part-slot', 'newsletter-html-part-slot'] as const;

// A quoted-printable line holds 76 characters. Each encoded piece keeps one free for the soft
// line break ("=") that joins it to the link after it.
const PIECE_LINE = 75;
const quotedPrintable = (text: string) => qpWrap(qpEncode(text.replace(/\r?\n/g, '\r\n')), PIECE_LINE);

/** Joins a part's encoded pieces around the link, each join a soft line break (nothing when decoded). */
const spliced = (pieces: readonly string[], link: string) => pieces.join(`=\r\n${quotedPrintable(link)}=\r\n`);

// Nodemailer's encoder of header values, made once: making a MimeNode takes a tenth of a millisecond.
const encoder = new MimeNode();

/** A header as Nodemailer writes it: its value encoded (punycode, encoded words), its line folded. */
const headerLine = (key: string, value: string) => foldLines(`${key}: ${encoder.encodeHeaderValue(key, value)}`, 76);

// Printable ASCII without a double quote or "=?": Nodemailer's encoder writes such a value of
// a header that holds no addresses as it is (an unsubscribe link, almost always).
const PLAIN_VALUE = /^[\x20\x21\x23-\x7e]*$/;

/** The List-Unsubscribe header as headerLine writes it, without the encoder where it has nothing to do. */
const listUnsubscribeLine = (value: string) =>
  PLAIN_VALUE.test(value) && !value.includes('=?') ? foldLines(`List-Unsubscribe: ${value}`, 76) : headerLine('List-Unsubscribe', value);

// A dot-atom at a domain of ASCII labels: Nodemailer writes it as it is, in the header and the envelope.
const PLAIN_ADDRESS = /^[\w!#$%&'*+/=?^`{|}~-]+(?:\.[\w!#$%&'*+/=?^`{|}~-]+)*@(?:[a-z0-9-]+\.)+[a-z][a-z0-9-]*$/i;

/** The To header and the envelope's address of a recipient, as Nodemailer makes them (parsing only the addresses that need it). */
export function recipientOf(to: string): { header: string; envelope: string[] } {
  if (PLAIN_ADDRESS.test(to)) return { header: foldLines(`To: ${to}`, 76), envelope: [to] };
  const node = new MimeNode();
  node.setHeader('To', to);
  return { header: headerLine('To', to), envelope: node.getEnvelope().to };
}

/** Composes the newsletter of `template` from `from` (once per send, again when its Date grows old). */
export async function composeNewsletter(template: NewsletterTemplate, from: { name: string; address: string }, at = Date.now()): Promise<ComposedNewsletter> {
  const [messageId, text, html] = SLOTS;
  const composer = new MailComposer({
    from,
    subject: template.subject,
    ...(template.replyTo ? { replyTo: template.replyTo } : {}),
    date: new Date(at),
    messageId: `<${messageId}@${from.address.split('@').pop()}>`,
    headers: { 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    text: { content: text, contentTransferEncoding: 'quoted-printable' },
    html: { content: html, contentTransferEncoding: 'quoted-printable' },
  });
  const message = (await composer.compile().build()).toString('utf8');
  const pieces: string[] = [];
  let rest = message;
  for (const slot of SLOTS) {
    const [before, after, more] = rest.split(slot);
    if (after === undefined || more !== undefined) throw new Error(`The composed newsletter has ${slot} ${after === undefined ? 'nowhere' : 'twice'}`);
    pieces.push(before!);
    rest = after;
  }
  pieces.push(rest);
  return {
    at,
    from: from.address,
    pieces: pieces as ComposedNewsletter['pieces'],
    text: linkSegments(template.text).map(quotedPrintable),
    html: linkSegments(template.html).map(quotedPrintable),
  };
}

/** One recipient's message: their address, a Message-ID of its own, their unsubscribe link in the headers and in both parts. */
export function newsletterMail(composed: ComposedNewsletter, view: PublicSite, to: string, unsubscribeToken: string): RawMail {
  const links = unsubscribeLinks(view, unsubscribeToken);
  const recipient = recipientOf(to);
  const [head, afterId, betweenParts, tail] = composed.pieces;
  const headers = `${listUnsubscribeLine(links.header)}\r\n${recipient.header}\r\n`;
  return {
    envelope: { from: composed.from, to: recipient.envelope },
    raw: headers + head + randomUUID() + afterId + spliced(composed.text, links.text) + betweenParts + spliced(composed.html, links.html) + tail,
  };
}
