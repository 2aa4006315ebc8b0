import type { Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import type { MailConfig } from '../config.js';
import { loadedOnFirstUse } from '../load-on-use.js';
import type { MailJobPayload } from './rules.js';

/** What the send job needs of a mail transport: one message out, its acceptance back. */
export interface MailTransport {
  send(message: MailJobPayload, signal: AbortSignal): Promise<{ accepted: number }>;
  close(): void;
}

// Well within a job's lease (60 s by default): a send that could still succeed after the lease
// ran out would let a second worker send the message again.
const CONNECTION_TIMEOUT_MS = 10_000;
const GREETING_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;

/** The SMTP server's connection options from SMTP_URL (smtps: TLS from the start; smtp: STARTTLS when offered). */
export function smtpOptions(smtpUrl: string) {
  const url = new URL(smtpUrl);
  const secure = url.protocol === 'smtps:';
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: GREETING_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    // Nodemailer's own logger stays off: its debug output would carry the message, links and all.
    logger: false,
    debug: false,
  };
}

/** Nodemailer over SMTP_URL, one connection per message (mail here is a trickle, not a stream). */
export function smtpTransport(config: MailConfig): MailTransport {
  // Nodemailer is loaded by the first message, not by every start of the service.
  let made: Transporter<SMTPTransport.SentMessageInfo> | null = null;
  const transporter = loadedOnFirstUse(async () => {
    const { default: nodemailer } = await import('nodemailer');
    made = nodemailer.createTransport(smtpOptions(config.smtpUrl));
    return made;
  });
  return {
    async send(message, signal) {
      signal.throwIfAborted();
      const info = await (await transporter()).sendMail({
        from: config.from,
        to: message.to,
        replyTo: message.replyTo,
        subject: message.subject,
        text: message.text,
        html: message.html,
        messageId: message.messageId,
        headers: message.headers,
      });
      return { accepted: info.accepted.length };
    },
    close: () => made?.close(),
  };
}
