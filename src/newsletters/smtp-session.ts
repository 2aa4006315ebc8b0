import type SMTPConnection from 'nodemailer/lib/smtp-connection';
import type { MailConfig } from '../config.js';
import { smtpOptions } from '../mail/transport.js';
import type { DeliverMail, OutgoingMail } from './sender.js';

/*
 * The SMTP connections of a newsletter, kept open across its messages, spoken to with
 * Nodemailer's own SMTP client (SMTPConnection) without its mail composer: a newsletter message
 * is already raw MIME (mime.ts), and composing it again per message (a MIME tree, a message id
 * and a boundary of random bytes, a stream pipeline) cost about as much CPU as the SMTP
 * transaction itself. Each connection does what Nodemailer's pool did: STARTTLS and AUTH at
 * connect, a refused recipient answered with RSET on the same connection, anything else
 * closing it (a transaction whose data never ended is dropped by the server with the
 * connection), and a new connection for its next message. A message goes over an idle
 * connection already open when there is one, else over a new one while fewer than
 * SMTP_CONNECTIONS are open, else waits for one to be free: a send keeps two messages in
 * flight (sender.ts), and two sends under way at once share the connections.
 */

/** An idle connection is closed after this long (servers drop idle clients after a minute or more). */
const IDLE_MS = 20_000;
/** Connections open at once; a message beyond them waits for one to be free. */
const SMTP_CONNECTIONS = 2;

export interface SmtpSession {
  deliver: DeliverMail;
  close(): void;
}

const closedError = () => Object.assign(new Error('The SMTP session is closed'), { code: 'ECONNECTION' });

/** One connection of the session: made on first use, and again after it was dropped. */
interface Lane {
  busy: boolean;
  current: Promise<SMTPConnection> | null;
  /** The connection `current` resolved to, once it has. */
  made: SMTPConnection | null;
  idle: NodeJS.Timeout | null;
}

export function smtpSession(config: MailConfig): SmtpSession {
  const { auth, ...options } = smtpOptions(config.smtpUrl);
  const lanes: Lane[] = Array.from({ length: SMTP_CONNECTIONS }, () => ({ busy: false, current: null, made: null, idle: null }));
  /** Messages waiting for a lane (more in flight than there are connections). */
  const waiting: { resolve(lane: Lane): void; reject(error: Error): void }[] = [];
  let closed = false;

  const drop = (lane: Lane, connection: SMTPConnection) => {
    connection.close();
    if (lane.made === connection) {
      lane.made = null;
      lane.current = null;
    }
  };

  const open = async (lane: Lane) => {
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
          connection.on('error', () => drop(lane, connection));
          connection.once('end', () => drop(lane, connection));
          resolve(connection);
        };
        if (!auth) return ready();
        connection.login(auth, (error) => (error ? failed(error) : ready()));
      });
    });
  };

  const connectionOf = (lane: Lane) => {
    if (!lane.current) {
      const opening = open(lane);
      lane.current = opening;
      opening.then(
        (connection) => {
          if (lane.current === opening) lane.made = connection;
        },
        // A connection that could not be made is not kept: the next message tries again.
        () => {
          if (lane.current === opening) lane.current = null;
        },
      );
    }
    return lane.current;
  };

  /** A free lane, one whose connection is open first; waits when every lane is busy. */
  const take = async (): Promise<Lane> => {
    const free = lanes.find((lane) => !lane.busy && lane.made) ?? lanes.find((lane) => !lane.busy);
    if (!free) return new Promise<Lane>((resolve, reject) => waiting.push({ resolve, reject }));
    free.busy = true;
    if (free.idle) clearTimeout(free.idle);
    return free;
  };

  /** The lane passes to a message waiting for one, or rests (its connection closed after IDLE_MS unused). */
  const give = (lane: Lane) => {
    const next = waiting.shift();
    if (next) return next.resolve(lane);
    lane.busy = false;
    lane.idle = setTimeout(() => {
      const idleOne = lane.made;
      lane.made = null;
      lane.current = null;
      idleOne?.quit();
    }, IDLE_MS);
    lane.idle.unref();
  };

  const send = (open: SMTPConnection, { envelope, raw }: OutgoingMail) =>
    new Promise<void>((resolve, reject) => open.send(envelope, raw, (error) => (error ? reject(error) : resolve())));

  const reset = (open: SMTPConnection) => new Promise<void>((resolve, reject) => open.reset((error) => (error ? reject(error) : resolve())));

  return {
    async deliver(mail) {
      if (closed) throw closedError();
      // A message held as a stream may fail (its record failed) before the connection listens to it,
      // or after the connection failed: kept here, never an unhandled error; such a message is
      // not sent at all.
      let failure: Error | null = null;
      const held = typeof mail.raw === 'string' ? null : mail.raw;
      held?.on('error', (error: Error) => (failure ??= error));
      const lane = await take();
      try {
        const open = await connectionOf(lane);
        if (failure || held?.destroyed) throw failure ?? new Error('The message stream was destroyed before it was sent');
        try {
          await send(open, mail);
        } catch (error) {
          const { code, responseCode } = error as { code?: string; responseCode?: number };
          // The server refused this recipient or message; the connection itself is fine.
          const refused = (code === 'EENVELOPE' || code === 'EMESSAGE') && responseCode !== 421;
          if (refused) await reset(open).catch(() => drop(lane, open));
          else drop(lane, open);
          throw error;
        }
      } finally {
        give(lane);
      }
    },
    close() {
      closed = true;
      // Messages waiting for a connection are not sent.
      for (const waiter of waiting.splice(0)) waiter.reject(closedError());
      for (const lane of lanes) {
        if (lane.idle) clearTimeout(lane.idle);
        const closing = lane.current;
        lane.current = null;
        lane.made = null;
        void closing?.then((connection) => connection.quit(), () => {});
      }
    },
  };
}
