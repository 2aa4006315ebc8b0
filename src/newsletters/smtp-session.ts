import type SMTPConnection from 'nodemailer/lib/smtp-connection';
import type { MailConfig } from '../config.js';
import { smtpOptions } from '../mail/transport.js';
import type { DeliverMail, OutgoingMail } from './sender.js';

/*
 * One SMTP connection kept open across a newsletter's messages, spoken to with Nodemailer's
 * own SMTP client (SMTPConnection) without its mail composer: a newsletter message is already
 * raw MIME (mime.ts), and composing it again per message (a MIME tree, a message id and a
 * boundary of random bytes, a stream pipeline) cost about as much CPU as the SMTP transaction
 * itself. The connection does what Nodemailer's pool did: STARTTLS and AUTH at connect, a
 * refused recipient answered with RSET on the same connection, anything else closing it (a
 * transaction whose data never ended is dropped by the server with the connection), and a new
 * connection for the next message.
 */

/** An idle connection is closed after this long (servers drop idle clients after a minute or more). */
const IDLE_MS = 20_000;

export interface SmtpSession {
  deliver: DeliverMail;
  close(): void;
}

export function smtpSession(config: MailConfig): SmtpSession {
  const { auth, ...options } = smtpOptions(config.smtpUrl);
  let current: Promise<SMTPConnection> | null = null;
  /** The connection `current` resolved to, once it has. */
  let made: SMTPConnection | null = null;
  let idle: NodeJS.Timeout | null = null;
  let closed = false;

  const drop = (connection: SMTPConnection) => {
    connection.close();
    if (made === connection) {
      made = null;
      current = null;
    }
  };

  const open = async () => {
    // Nodemailer's SMTP client is loaded by the first message, not by every start of the service.
    const { default: Client } = await import('nodemailer/lib/smtp-connection');
    return new Promise<SMTPConnection>((resolve, reject) => {
      const connection = new Client(options);
      const failed = (error: Error) => {
        connection.close();
        reject(error);
      };
      connection.once('error', failed);
      connection.connect(() => {
        const ready = () => {
          connection.off('error', failed);
          // Later errors reach the message being sent through its callback; the connection goes.
          connection.on('error', () => drop(connection));
          connection.once('end', () => drop(connection));
          resolve(connection);
        };
        if (!auth) return ready();
        connection.login(auth, (error) => (error ? failed(error) : ready()));
      });
    });
  };

  const connection = () => {
    if (!current) {
      const opening = open();
      current = opening;
      opening.then(
        (connection) => {
          if (current === opening) made = connection;
        },
        // A connection that could not be made is not kept: the next message tries again.
        () => {
          if (current === opening) current = null;
        },
      );
    }
    return current;
  };

  const send = (open: SMTPConnection, { envelope, raw }: OutgoingMail) =>
    new Promise<void>((resolve, reject) => open.send(envelope, raw, (error) => (error ? reject(error) : resolve())));

  const reset = (open: SMTPConnection) => new Promise<void>((resolve, reject) => open.reset((error) => (error ? reject(error) : resolve())));

  return {
    async deliver(mail) {
      if (closed) throw Object.assign(new Error('The SMTP session is closed'), { code: 'ECONNECTION' });
      if (idle) clearTimeout(idle);
      // A message held as a stream may fail (its record failed) before the connection listens to it,
      // or after the connection failed: kept here, never an unhandled error; such a message is
      // not sent at all.
      let failure: Error | null = null;
      const held = typeof mail.raw === 'string' ? null : mail.raw;
      held?.on('error', (error: Error) => (failure ??= error));
      const open = await connection();
      if (failure || held?.destroyed) throw failure ?? new Error('The message stream was destroyed before it was sent');
      try {
        await send(open, mail);
      } catch (error) {
        const { code, responseCode } = error as { code?: string; responseCode?: number };
        // The server refused this recipient or message; the connection itself is fine.
        const refused = (code === 'EENVELOPE' || code === 'EMESSAGE') && responseCode !== 421;
        if (refused) await reset(open).catch(() => drop(open));
        else drop(open);
        throw error;
      } finally {
        idle = setTimeout(() => {
          const idleOne = made;
          made = null;
          current = null;
          idleOne?.quit();
        }, IDLE_MS);
        idle.unref();
      }
    },
    close() {
      closed = true;
      if (idle) clearTimeout(idle);
      const closing = current;
      current = null;
      made = null;
      void closing?.then((connection) => connection.quit(), () => {});
    },
  };
}
