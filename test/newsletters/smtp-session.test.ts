import net, { type AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import t, { type Test } from 'tap';
import { smtpSession } from '../../src/newsletters/smtp-session.js';
import { startMailbox, type Mailbox } from '../helpers/smtp.js';

// The newsletter's SMTP connections: one connection for many messages sent one after another
// (two for two at once), a refused recipient answered on it, anything else closing it, and a
// new one made for the next message.

/** Recipients of the messages the server accepted, in order. */
const accepted = (mailbox: Mailbox) => mailbox.received.flatMap((mail) => mail.rcptTo);

const mail = (to: string) => {
  const raw = new PassThrough();
  raw.end(`From: news@example.com\r\nTo: ${to}\r\nSubject: Hello\r\n\r\nHello.\r\n`);
  return { envelope: { from: 'news@example.com', to: [to] }, raw };
};

/** What the promise was rejected with (null when it was not). */
const failureOf = (promise: Promise<unknown>) => promise.then(() => null, (error: unknown) => error);

const session = (t: Test, url: string) => {
  const smtp = smtpSession({ smtpUrl: url, from: 'news@example.com' } as never);
  t.teardown(() => smtp.close());
  return smtp;
};

t.test('messages go one after another over one connection', async (t) => {
  const mailbox = await startMailbox(t);
  const smtp = session(t, mailbox.url);
  for (const to of ['a@example.com', 'b@example.com', 'c@example.com']) await smtp.deliver(mail(to));
  t.same(accepted(mailbox), ['a@example.com', 'b@example.com', 'c@example.com']);
  t.equal(mailbox.connections.length, 1, 'one connection for all three');
});

/** A message whose data is written but not ended until the test ends `raw`. */
const heldMail = (to: string) => {
  const raw = new PassThrough();
  raw.write(`From: news@example.com\r\nTo: ${to}\r\nSubject: Hello\r\n\r\nHello.\r\n`);
  return { envelope: { from: 'news@example.com', to: [to] }, raw };
};

t.test('a message goes over a second connection while another is held', async (t) => {
  const mailbox = await startMailbox(t);
  const smtp = session(t, mailbox.url);
  const held = heldMail('a@example.com');
  const first = smtp.deliver(held);
  await smtp.deliver(mail('b@example.com'));
  t.same(accepted(mailbox), ['b@example.com'], 'the second was accepted while the first was held');
  held.raw.end();
  await first;
  t.same(accepted(mailbox), ['b@example.com', 'a@example.com']);
  t.equal(mailbox.connections.length, 2);
});

t.test('with both connections busy a third message waits, then goes over the first one free', async (t) => {
  const mailbox = await startMailbox(t);
  const smtp = session(t, mailbox.url);
  const a = heldMail('a@example.com');
  const b = heldMail('b@example.com');
  const first = smtp.deliver(a);
  const second = smtp.deliver(b);
  let thirdDone = false;
  const third = smtp.deliver(mail('c@example.com')).then(() => (thirdDone = true));
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.same(accepted(mailbox), [], 'nothing accepted while both are held');
  t.notOk(thirdDone, 'the third waits while both connections are busy');
  t.equal(mailbox.connections.length, 2, 'no third connection');
  a.raw.end();
  await Promise.all([first, third]);
  t.same(accepted(mailbox), ['a@example.com', 'c@example.com'], 'the third went once the first was done');
  b.raw.end();
  await second;
  t.same(accepted(mailbox), ['a@example.com', 'c@example.com', 'b@example.com']);
  t.equal(mailbox.connections.length, 2, 'two connections in all');
});

t.test('a message waiting for a connection when the session closes is not sent', async (t) => {
  const mailbox = await startMailbox(t);
  const smtp = session(t, mailbox.url);
  const a = heldMail('a@example.com');
  const b = heldMail('b@example.com');
  void smtp.deliver(a).catch(() => {});
  void smtp.deliver(b).catch(() => {});
  const third = failureOf(smtp.deliver(mail('c@example.com')));
  await new Promise((resolve) => setTimeout(resolve, 100));
  smtp.close();
  t.match(await third, { code: 'ECONNECTION', message: /closed/ });
  t.notOk(accepted(mailbox).includes('c@example.com'));
});

t.test('a refused recipient is told with its code; the next message goes over the same connection', async (t) => {
  const mailbox = await startMailbox(t);
  const smtp = session(t, mailbox.url);
  mailbox.refuse.set('gone@example.com', 550).set('busy@example.com', 451);
  await smtp.deliver(mail('a@example.com'));
  t.match(await failureOf(smtp.deliver(mail('gone@example.com'))), { responseCode: 550 });
  t.match(await failureOf(smtp.deliver(mail('busy@example.com'))), { responseCode: 451 });
  await smtp.deliver(mail('b@example.com'));
  t.same(accepted(mailbox), ['a@example.com', 'b@example.com']);
  t.equal(mailbox.connections.length, 1, 'the session was reset, not reconnected');
});

t.test('a connection the server closed is replaced for the next message', async (t) => {
  const mailbox = await startMailbox(t);
  const smtp = session(t, mailbox.url);
  await smtp.deliver(mail('a@example.com'));
  const first = mailbox.connections[0]!;
  const ended = new Promise((resolve) => first.once('close', resolve));
  first.destroy();
  await ended;
  // The client learns of the close from its socket; give it the turn to.
  await new Promise((resolve) => setTimeout(resolve, 50));
  await smtp.deliver(mail('b@example.com'));
  t.same(accepted(mailbox), ['a@example.com', 'b@example.com']);
  t.equal(mailbox.connections.length, 2);
});

t.test('a message whose stream fails is not accepted, and the connection after it works', async (t) => {
  const mailbox = await startMailbox(t);
  const smtp = session(t, mailbox.url);
  const failing = new PassThrough();
  failing.write('From: news@example.com\r\nSubject: Half\r\n\r\nHal');
  setTimeout(() => failing.destroy(new Error('the record failed')), 20);
  await t.rejects(smtp.deliver({ envelope: { from: 'news@example.com', to: ['half@example.com'] }, raw: failing }));
  // Failed before the connection was there: nothing is sent, nothing is unhandled.
  const early = new PassThrough();
  early.destroy(new Error('failed at once'));
  await t.rejects(smtp.deliver({ envelope: { from: 'news@example.com', to: ['early@example.com'] }, raw: early }));
  await smtp.deliver(mail('next@example.com'));
  t.same(accepted(mailbox), ['next@example.com']);
});

t.test('AUTH from the URL; wrong credentials are an authentication error', async (t) => {
  const mailbox = await startMailbox(t, { user: 'news', pass: 's3cret' });
  await session(t, mailbox.url).deliver(mail('a@example.com'));
  t.same(accepted(mailbox), ['a@example.com']);
  const wrong = session(t, mailbox.url.replace('s3cret', 'wrong'));
  t.match(await failureOf(wrong.deliver(mail('b@example.com'))), { code: 'EAUTH', responseCode: 535 });
  t.same(accepted(mailbox), ['a@example.com']);
});

t.test('no server: a connection error, and a later message tries again', async (t) => {
  // A port that was free a moment ago: nothing listens on it.
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  const smtp = session(t, `smtp://127.0.0.1:${port}`);
  await t.rejects(smtp.deliver(mail('a@example.com')), { code: 'ESOCKET' });
  await t.rejects(smtp.deliver(mail('a@example.com')), { code: 'ESOCKET' });
});

t.test('a closed session refuses to send', async (t) => {
  const mailbox = await startMailbox(t);
  const smtp = session(t, mailbox.url);
  await smtp.deliver(mail('a@example.com'));
  smtp.close();
  await t.rejects(smtp.deliver(mail('b@example.com')), /closed/);
  t.same(accepted(mailbox), ['a@example.com']);
});
