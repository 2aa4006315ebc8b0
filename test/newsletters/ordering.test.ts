import type { Readable } from 'node:stream';
import t, { type Test } from 'tap';
import type { Site } from '../../src/db/schema.js';
import { composeNewsletter, newsletterMail } from '../../src/newsletters/mime.js';
import type { NewsletterRecipientRow } from '../../src/newsletters/rules.js';
import { endingAfter, newsletterSendHandler, RateLimiter, type DeliverMail } from '../../src/newsletters/sender.js';
import type { NewsletterStore, RecipientOutcome } from '../../src/newsletters/store.js';
import type { PublicPost, PublicSite } from '../../src/public-site/types.js';
import { smtpSession } from '../../src/newsletters/smtp-session.js';
import { startMailbox } from '../helpers/smtp.js';

// Two messages are in flight at once: the next message's transaction begins while the one
// before it awaits the server's answer and its record, but its end of data (written by
// Nodemailer once its stream ends) waits for that record to commit: a kill can never leave two
// messages accepted by the server and unrecorded.

const site = { id: 'site', name: 'Notes', language: 'en', newsletterFooter: null, newsletterReplyTo: null, newsletterSenderName: null } as unknown as Site;
const view = { baseUrl: 'https://blog.example.com' } as unknown as PublicSite;
const post = { title: 'An issue', slug: 'an-issue', html: '<p>Hello.</p>', featureImage: null } as unknown as PublicPost;

const recipientsOf = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ postId: 'post', subscriberId: `s${i}`, email: `r${i}@example.com`, unsubscribeToken: `tok${i}`, attempts: 1, nextAttemptAt: new Date() }) as unknown as NewsletterRecipientRow);

/** A store whose records commit only when the test says (`commit`), telling what happens in `events`. */
function slowStore(batch: NewsletterRecipientRow[], events: string[], fail?: string) {
  let claimed = false;
  const pending: (() => void)[] = [];
  const store = {
    soleWorker: true,
    claim: async () => (claimed ? [] : ((claimed = true), batch)),
    extendClaims: async () => {},
    settle: (recipient: NewsletterRecipientRow, _owner: string, outcome: RecipientOutcome) => {
      events.push(`record ${recipient.subscriberId} ${outcome.status}`);
      return new Promise<boolean>((resolve, reject) =>
        pending.push(() => {
          if (recipient.subscriberId === fail) return reject(new Error('the database went away'));
          events.push(`committed ${recipient.subscriberId}`);
          resolve(true);
        }),
      );
    },
  } as unknown as NewsletterStore;
  return { store, commitNext: () => pending.shift()?.() };
}

/** A store whose records commit at once, telling each in `events`. */
function instantStore(batch: NewsletterRecipientRow[], events: string[]) {
  let claimed = false;
  return {
    soleWorker: true,
    claim: async () => (claimed ? [] : ((claimed = true), batch)),
    extendClaims: async () => {},
    settle: async (recipient: NewsletterRecipientRow, _owner: string, outcome: RecipientOutcome) => {
      events.push(`record ${recipient.subscriberId} ${outcome.status}`);
      return true;
    },
  } as unknown as NewsletterStore;
}

/** The records among `events`, in order. */
const recordsIn = (events: string[]) => events.filter((event) => event.startsWith('record'));

/** Runs the send handler over `store` with `deliver`. */
const run = (store: NewsletterStore, deliver: DeliverMail, signal = new AbortController().signal, limiter = new RateLimiter(1_000_000)) =>
  newsletterSendHandler({
    newsletters: store,
    source: { load: async () => ({ site, view, post }) },
    mailFrom: 'news@example.com',
    deliver,
    limiter,
    log: { warn: () => {} },
  }).run({ postId: 'post' }, signal, { id: 'job', siteId: 'site', attempts: 1, leaseOwner: 'test' } as never);

/**
 * Reads a message to its end, telling in `events` when it ended (when Nodemailer would write the
 * end of data): at once for a message given whole (the record before it had committed).
 */
const readAll = (raw: string | Readable, events: string[], to: string) =>
  new Promise<void>((resolve, reject) => {
    if (typeof raw === 'string') {
      events.push(`data ended ${to}`);
      return resolve();
    }
    raw.on('data', () => {});
    raw.on('end', () => {
      events.push(`data ended ${to}`);
      resolve();
    });
    raw.on('error', reject);
  });

/**
 * A deliver that tells in `events` when each message begins and when its data ends (read to the
 * end, as Nodemailer would); `before` runs first for each recipient (a refusal throws there).
 */
const recordingDeliver =
  (events: string[], before: (to: string) => void = () => {}): DeliverMail =>
  async ({ envelope, raw }) => {
    const to = envelope.to[0]!.replace(/@.*/, '').replace('r', 's');
    events.push(`deliver ${to}`);
    before(to);
    await readAll(raw, events, to);
  };

/** Lets the event loop turn until `done()` holds; fails the test (instead of hanging) if it never does. */
async function until(t: Test, done: () => boolean, what: string): Promise<void> {
  for (let turns = 0; turns < 10_000 && !done(); turns++) await new Promise((resolve) => setImmediate(resolve));
  if (!done()) t.fail(`never happened: ${what}`);
}

/** Lets the event loop turn a while: whatever was going to happen without the test's next step has. */
const settleTurns = async () => {
  for (let turns = 0; turns < 50; turns++) await new Promise((resolve) => setImmediate(resolve));
};

t.test("a message's end of data waits for the record of the one before it to commit", async (t) => {
  const events: string[] = [];
  const { store, commitNext } = slowStore(recipientsOf(4), events);
  const deliver = recordingDeliver(events);
  const sending = run(store, deliver);
  for (let i = 0; i < 4; i++) {
    await until(t, () => events.includes(`record s${i} sent`), `record s${i}`);
    if (i < 3) {
      // The next message begins while this record is uncommitted (the overlap), and its data does not end.
      await until(t, () => events.includes(`deliver s${i + 1}`), `deliver s${i + 1} before record s${i} commits`);
      await settleTurns();
      t.notOk(events.includes(`data ended s${i + 1}`), `s${i + 1}'s data has not ended while record s${i} is uncommitted`);
      t.notOk(events.includes(`record s${i + 1} sent`), `one record at a time: s${i + 1}'s waits for s${i}'s`);
    }
    commitNext();
  }
  t.match(await sending, { sent: 4 });
  for (let i = 1; i < 4; i++) {
    t.ok(events.indexOf(`data ended s${i}`) > events.indexOf(`committed s${i - 1}`), `s${i}'s data ended after record s${i - 1} committed`);
  }
});

t.test('the next message begins while the one before it awaits the server; a third waits for the first to be recorded', async (t) => {
  const events: string[] = [];
  const { store, commitNext } = slowStore(recipientsOf(3), events);
  let answerFirst = () => {};
  const answered = new Promise<void>((resolve) => (answerFirst = resolve));
  const plain = recordingDeliver(events);
  // The server answers s0 only when the test says.
  const deliver: DeliverMail = async (mail) => {
    await plain(mail);
    if (mail.envelope.to[0] === 'r0@example.com') await answered;
  };
  const sending = run(store, deliver);
  await until(t, () => events.includes('deliver s1'), 'deliver s1 while s0 awaits its answer');
  await settleTurns();
  t.notOk(events.includes('record s0 sent'), 's0 is not recorded before its answer');
  t.notOk(events.includes('data ended s1'), "s1's data has not ended: s0's record has not committed");
  t.notOk(events.includes('deliver s2'), 'two messages in flight at most');
  answerFirst();
  await until(t, () => events.includes('record s0 sent'), 'record s0');
  await settleTurns();
  t.notOk(events.includes('deliver s2'), 's2 waits for the record of s0 to commit');
  commitNext();
  await until(t, () => events.includes('deliver s2'), 'deliver s2');
  commitNext();
  await until(t, () => events.includes('record s2 sent'), 'record s2');
  commitNext();
  t.match(await sending, { sent: 3 });
});

t.test("a record's release of the next message's end of data goes out before the message after it begins", async (t) => {
  const events: string[] = [];
  const { store, commitNext } = slowStore(recipientsOf(3), events);
  // A limiter that never waits: nothing but the sender itself orders the two.
  const sending = run(store, recordingDeliver(events), undefined, { wait: async () => {} } as unknown as RateLimiter);
  await until(t, () => events.includes('record s0 sent'), 'record s0');
  commitNext();
  await until(t, () => events.includes('deliver s2'), 'deliver s2');
  const ended = events.indexOf('data ended s1');
  t.ok(ended !== -1 && ended < events.indexOf('deliver s2'), "s1's end of data went out before s2 began");
  commitNext();
  await until(t, () => events.includes('record s2 sent'), 'record s2');
  commitNext();
  t.match(await sending, { sent: 3 });
});

t.test('a refused message is recorded after the record before it, one record at a time', async (t) => {
  const events: string[] = [];
  const { store, commitNext } = slowStore(recipientsOf(3), events);
  const deliver = recordingDeliver(events, (to) => {
    // Refused at RCPT TO: no data is read.
    if (to === 's1') throw Object.assign(new Error('No such user'), { responseCode: 550 });
  });
  const sending = run(store, deliver);
  await until(t, () => events.includes('deliver s1'), 'deliver s1 while record s0 is uncommitted');
  await settleTurns();
  t.notOk(events.includes('record s1 bounced'), "the refusal's record waits for the record before it");
  commitNext();
  await until(t, () => events.includes('record s1 bounced'), 'record s1');
  await until(t, () => events.includes('deliver s2'), 'deliver s2');
  await settleTurns();
  t.notOk(events.includes('data ended s2'), "s2's data has not ended while the refusal's record is uncommitted");
  commitNext();
  await until(t, () => events.includes('record s2 sent'), 'record s2');
  commitNext();
  t.match(await sending, { sent: 2 });
  t.ok(events.indexOf('record s1 bounced') > events.indexOf('committed s0'), 'the refusal was recorded after the record before it committed');
  t.ok(events.indexOf('data ended s2') > events.indexOf('committed s1'), "s2's data ended after the refusal's record committed");
});

t.test('a record that fails leaves the next message unended, and the send fails with it', async (t) => {
  const events: string[] = [];
  const { store, commitNext } = slowStore(recipientsOf(3), events, 's0');
  const deliver = recordingDeliver(events, () => setImmediate(() => commitNext()));
  await t.rejects(run(store, deliver), { message: 'the database went away' });
  // s1 begins while s0 awaits its record (two messages in flight), in whichever order the two come.
  t.same([...events].sort(), ['data ended s0', 'deliver s0', 'deliver s1', 'record s0 sent'], 's1 never ended, s2 never begun');
});

t.test('the server away at one message: it and the rest of the batch go back due, those before it are recorded', async (t) => {
  const events: string[] = [];
  const deliver = recordingDeliver(events, (to) => {
    if (to === 's2') throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNECTION' });
  });
  await t.rejects(run(instantStore(recipientsOf(5), events), deliver), { message: /mail server is unavailable/ });
  t.same(recordsIn(events), ['record s0 sent', 'record s1 sent', 'record s2 retry', 'record s3 retry', 'record s4 retry']);
  t.notOk(events.includes('data ended s3'), 's3 (begun beside s2) never ended');
});

t.test('shut down mid-batch: the messages begun are recorded, the rest go back due', async (t) => {
  const events: string[] = [];
  const shutdown = new AbortController();
  const deliver = recordingDeliver(events, (to) => {
    if (to === 's1') shutdown.abort();
  });
  t.match(await run(instantStore(recipientsOf(5), events), deliver, shutdown.signal), { sent: 2 });
  t.same(recordsIn(events), ['record s0 sent', 'record s1 sent', 'record s2 retry', 'record s3 retry', 'record s4 retry']);
  t.notOk(events.includes('deliver s2'), 'nothing begun after the shutdown');
});

/** An SMTP session to a real SMTP server in the test, and a newsletter message for any address. */
async function overSmtp(t: Test) {
  const mailbox = await startMailbox(t);
  const smtp = smtpSession({ smtpUrl: mailbox.url, from: 'news@example.com' } as never);
  t.teardown(() => smtp.close());
  const composed = await composeNewsletter({ subject: 'S', text: 'Hello.', html: '<p>Hello.</p>' } as never, { name: 'N', address: 'news@example.com' });
  return { mailbox, smtp, message: (to: string) => newsletterMail(composed, view, to, 'tok') };
}

t.test('over SMTP, a message whose stream fails is never accepted; the connection goes on', async (t) => {
  const { mailbox, smtp, message } = await overSmtp(t);
  const failed = Promise.reject(new Error('the record failed'));
  failed.catch(() => {});
  const first = message('held@example.com');
  await t.rejects(smtp.deliver({ envelope: first.envelope, raw: endingAfter(first.raw, failed) }));
  const second = message('next@example.com');
  await smtp.deliver({ envelope: second.envelope, raw: endingAfter(second.raw, Promise.resolve()) });
  t.same(
    mailbox.received.map((mail) => mail.rcptTo),
    [['next@example.com']],
    'only the message whose stream ended arrived',
  );
});

t.test("over SMTP, a held message's data reaches the server at once; only its end waits, and a failed record drops it", async (t) => {
  const { mailbox, smtp, message } = await overSmtp(t);
  const hold = () => {
    let release!: () => void;
    let fail!: (error: Error) => void;
    const record = new Promise<void>((resolve, reject) => ((release = resolve), (fail = reject)));
    return { record, release, fail };
  };
  const waitForData = async (bytes: number) => {
    for (let turns = 0; turns < 2500 && mailbox.dataBytes() < bytes; turns++) await new Promise((resolve) => setTimeout(resolve, 2));
  };
  /** Whether the server has answered the message's end of data (its delivery settled). */
  const answered = (sending: Promise<void>) => {
    const state = { done: false };
    sending.then(
      () => (state.done = true),
      () => (state.done = true),
    );
    return state;
  };

  const first = message('first@example.com');
  const firstRecord = hold();
  const firstSent = smtp.deliver({ envelope: first.envelope, raw: endingAfter(first.raw, firstRecord.record) });
  const firstAnswered = answered(firstSent);
  // smtp-server reads the message less its dot-stuffing, and holds back its last few bytes until
  // it knows they are not the end of data.
  const nearlyAll = (raw: string) => raw.length - 8;
  await waitForData(nearlyAll(first.raw));
  t.ok(mailbox.dataBytes() >= nearlyAll(first.raw), `the whole message reached the server while its record was still on its way (${mailbox.dataBytes()} of ${first.raw.length})`);
  // Time enough for the server to answer an end of data, had it been sent.
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.notOk(firstAnswered.done, 'but its end of data has not been sent: the server has not answered it');
  t.same(mailbox.received, [], 'nor accepted it');
  firstRecord.release();
  await firstSent;
  t.same(mailbox.received.map((mail) => mail.rcptTo), [['first@example.com']], 'accepted once the record committed');

  const second = message('second@example.com');
  const secondRecord = hold();
  const before = mailbox.dataBytes();
  const secondSent = smtp.deliver({ envelope: second.envelope, raw: endingAfter(second.raw, secondRecord.record) });
  await waitForData(before + nearlyAll(second.raw));
  t.ok(mailbox.dataBytes() >= before + nearlyAll(second.raw), 'the second message reached the server before its record failed');
  const connections = mailbox.connections.length;
  secondRecord.fail(new Error('the record failed'));
  await t.rejects(secondSent, 'the message whose record failed fails');
  const third = message('third@example.com');
  await smtp.deliver({ envelope: third.envelope, raw: endingAfter(third.raw, Promise.resolve()) });
  t.same(
    mailbox.received.map((mail) => mail.rcptTo),
    [['first@example.com'], ['third@example.com']],
    'the dropped message never arrived; the next one did',
  );
  t.equal(mailbox.connections.length, connections + 1, 'over a new connection (the one holding the dropped message was closed)');
});
