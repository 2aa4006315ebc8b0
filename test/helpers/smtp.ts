import type { AddressInfo, Socket } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { waitFor } from './app.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface Received {
  /** The envelope's recipients, as the client gave them in RCPT TO. */
  rcptTo: string[];
  mailFrom: string | null;
  /** The message as mailparser reads it. */
  parsed: ParsedMail;
  /** The message as it arrived, for what a parser would hide. */
  raw: string;
}

export interface Mailbox {
  /** SMTP_URL for the service: smtp://[user:pass@]127.0.0.1:<port>. */
  url: string;
  port: number;
  received: Received[];
  /** The next `count` messages are refused at RCPT TO with this SMTP code (4xx: try later; 5xx: never). */
  refuseNext(count: number, code: number): void;
  /** Recipients always refused at RCPT TO, with the SMTP code to answer. */
  refuse: Map<string, number>;
  /** The connections clients have made, in order (the server's end of each). */
  connections: Socket[];
  /** Bytes of message data read so far, of messages whose data has not ended too. */
  dataBytes(): number;
  /** Resolves with the `n`th message (1-based) to arrive. */
  nth(n: number): Promise<Received>;
  /** Resolves with the first message to `address` (lower case) that satisfies `match`. */
  to(address: string, match?: (mail: Received) => boolean): Promise<Received>;
}

/**
 * A real SMTP server in the test process (smtp-server), keeping what arrives: the service sends
 * to it through SMTP_URL exactly as to any other server. No TLS (STARTTLS is not offered), so
 * the client speaks plain SMTP on loopback; `auth` makes it require that user and password.
 */
export async function startMailbox(t: Teardown, auth?: { user: string; pass: string }): Promise<Mailbox> {
  const received: Received[] = [];
  let refusals: { left: number; code: number } = { left: 0, code: 0 };
  const refuse = new Map<string, number>();
  const connections: Socket[] = [];
  let dataBytes = 0;
  const refusal = (code: number) => Object.assign(new Error(code >= 500 ? 'No such user here' : 'Try again later'), { responseCode: code });
  const server = new SMTPServer({
    disabledCommands: auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !auth,
    allowInsecureAuth: true,
    logger: false,
    onAuth(credentials, _session, callback) {
      if (auth && credentials.username === auth.user && credentials.password === auth.pass) return callback(null, { user: auth.user });
      callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      const code = refuse.get(address.address);
      if (code) return callback(refusal(code));
      if (refusals.left > 0) {
        refusals.left--;
        return callback(refusal(refusals.code));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        dataBytes += chunk.length;
      });
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw).then(
          (parsed) => {
            received.push({ rcptTo: session.envelope.rcptTo.map((a) => a.address), mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : null, parsed, raw });
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  server.server.on('connection', (socket: Socket) => connections.push(socket));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // A client that dies mid-conversation (the crash tests SIGKILL the service while it sends)
  // resets its connection: the server says so as an error event, which is no failure of the test.
  server.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') throw error;
  });
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.server.address() as AddressInfo).port;
  const credentials = auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@` : '';
  return {
    url: `smtp://${credentials}127.0.0.1:${port}`,
    port,
    received,
    refuseNext(count, code) {
      refusals = { left: count, code };
    },
    refuse,
    connections,
    dataBytes: () => dataBytes,
    nth: (n) => waitFor(() => received[n - 1], `mail number ${n} to arrive`),
    to: (address, match = () => true) => waitFor(() => received.find((mail) => mail.rcptTo.includes(address) && match(mail)), `a mail to ${address}`),
  };
}

/** The first link in a message's text part that starts with `prefix`. */
export function linkIn(mail: Received, prefix: string): string {
  const text = mail.parsed.text ?? '';
  const at = text.indexOf(prefix);
  if (at === -1) throw new Error(`no link starting with ${prefix} in: ${text}`);
  return /^\S+/.exec(text.slice(at))![0];
}

/** A header of a raw message as it arrived, unfolded (mailparser folds List-* headers into one object). */
export function rawHeader(mail: Received, name: string): string | undefined {
  const head = mail.raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, ' ');
  const line = head.split(/\r?\n/).find((entry) => entry.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}
