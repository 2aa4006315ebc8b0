import { randomUUID } from 'node:crypto';
import { validationError } from '../errors.js';

/*
 * Outgoing mail, the rules that need neither the network nor a database: what a message is,
 * what its job carries, and which SMTP failures are worth another try.
 */

/** The job kind of one message: each message is one job, in a loop of its own (plugins/mail.ts). */
export const MAIL_SEND = 'mail-send';

/** A message as a feature hands it over: both parts are required (clients that show only one get it). */
export interface MailMessage {
  /** One recipient address. */
  to: string;
  subject: string;
  /** The plain-text part. */
  text: string;
  /** The HTML part (render both with renderMail for the house layout). */
  html: string;
  replyTo?: string;
  /** Further headers (`List-Unsubscribe`, say); names are checked, values must be one line. */
  headers?: Record<string, string>;
}

/** What a mail job carries: the message as it will be sent, its Message-ID fixed at enqueue time. */
export interface MailJobPayload extends MailMessage {
  messageId: string;
}

/**
 * What a sent message's job keeps as its payload: to whom, the subject and the Message-ID; not
 * its parts or headers, where a link's token (a reset, an invitation, an unsubscribe) would
 * otherwise sit in the jobs table for as long as the job is kept.
 */
export interface SentMailPayload {
  to: string;
  subject: string;
  messageId: string;
  sent: true;
}

export const sentPayload = (payload: MailJobPayload): SentMailPayload => ({ to: payload.to, subject: payload.subject, messageId: payload.messageId, sent: true });

/** What a sent message's job keeps as its result: nothing of the message's body (a link's token). */
export interface MailJobResult {
  messageId: string;
  accepted: number;
}

const ADDRESS = /^[^\s@<>",;]+@[^\s@<>",;]+\.[^\s@<>",;]+$/;
const HEADER_NAME = /^[A-Za-z][A-Za-z0-9-]{0,63}$/;
// Headers the mailer sets itself: a caller cannot override them.
const RESERVED_HEADERS = new Set(['from', 'to', 'cc', 'bcc', 'subject', 'message-id', 'date', 'reply-to', 'sender', 'content-type', 'mime-version', 'content-transfer-encoding']);
const oneLine = (value: string) => !/[\r\n]/.test(value);

export const MAX_SUBJECT_LENGTH = 300;
/** A message's parts together: far above any account or comment mail, below what servers refuse. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Whether `value` is one plain email address (no display name, no list). */
export const isAddress = (value: string) => value.length <= 254 && ADDRESS.test(value);

/** Checks a message before it is queued: a bad one is a programming error of the caller, reported as a 400. */
export function checkMessage(message: MailMessage): void {
  const problems: { path: string; message: string }[] = [];
  if (!isAddress(message.to)) problems.push({ path: '/to', message: 'must be one email address' });
  if (message.replyTo !== undefined && !isAddress(message.replyTo)) problems.push({ path: '/replyTo', message: 'must be one email address' });
  if (!message.subject.trim() || message.subject.length > MAX_SUBJECT_LENGTH || !oneLine(message.subject)) problems.push({ path: '/subject', message: `must be one line of 1-${MAX_SUBJECT_LENGTH} characters` });
  if (!message.text.trim()) problems.push({ path: '/text', message: 'must not be empty' });
  if (!message.html.trim()) problems.push({ path: '/html', message: 'must not be empty' });
  if (Buffer.byteLength(message.text) + Buffer.byteLength(message.html) > MAX_BODY_BYTES) problems.push({ path: '/html', message: `the parts together exceed ${MAX_BODY_BYTES} bytes` });
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (!HEADER_NAME.test(name) || RESERVED_HEADERS.has(name.toLowerCase()) || !oneLine(value)) problems.push({ path: `/headers/${name}`, message: 'not a header a message may add' });
  }
  if (problems.length) throw validationError('The message cannot be sent', problems);
}

/** The domain of a sender (`Blog <no-reply@example.com>` → `example.com`): Message-IDs are made under it. */
export function senderDomain(from: string): string {
  const address = /<([^>]+)>\s*$/.exec(from)?.[1] ?? from;
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

/** A new Message-ID (RFC 5322: `<unique@domain>`). */
export const newMessageId = (domain: string) => `<${randomUUID()}@${domain}>`;

/**
 * How a failed send is retried. 5xx: the server refused the message or the recipient for good
 * (retrying sends nothing more). 4xx: a temporary refusal, retried with backoff. No answer at
 * all (connection refused, timeout, TLS, authentication): the mail server is unavailable, not
 * the message at fault; the job waits for it without using its attempts.
 */
export function classifySendError(error: unknown): 'permanent' | 'retry' | 'unavailable' {
  const { responseCode, code } = (error ?? {}) as { responseCode?: unknown; code?: unknown };
  if (typeof responseCode === 'number' && responseCode >= 500 && responseCode < 600) return code === 'EAUTH' ? 'unavailable' : 'permanent';
  if (typeof responseCode === 'number' && responseCode >= 400 && responseCode < 500) return 'retry';
  if (code === 'EENVELOPE' || code === 'EMESSAGE') return 'permanent';
  return 'unavailable';
}
