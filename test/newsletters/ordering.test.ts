import type { Readable } from 'node:stream';
import t from 'tap';
import type { Site } from '../../src/db/schema.js';
import { composeNewsletter, newsletterMail } from '../../src/newsletters/mime.js';
import type { NewsletterRecipientRow } from '../../src/newsletters/rules.js';
import { endingAfter, newsletterSendHandler, pooledSmtp, RateLimiter, type DeliverMail } from '../../src/newsletters/sender.js';
import type { NewsletterStore, RecipientOutcome } from '../../src/newsletters/store.js';
import type { PublicPost, PublicSite } from '../../src/public-site/types.js';
import { startMailbox } from '../helpers/smtp.js';

// The record of one message is written while the next message's transaction runs, but that
// message's end of data (written by Nodemailer once its stream ends) waits for the record to
// commit: a kill can never leave two messages accepted by the server and unrecorded.

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

/** Runs the send handler over `store` with `deliver`. */
const run = (store: NewsletterStore, deliver: DeliverMail) =>
  newsletterSendHandler({
    newsletters: store,
    source: { load: async () => ({ site, view, post }) },
    mailFrom: 'news@example.com',
    deliver,
    limiter: new RateLimiter(1_000_000),
    log: { warn: () => {} },
  }).run({ postId: 'post' }, new AbortController().signal, { id: 'job', siteId: 'site', attempts: 1, leaseOwner: 'test' } as never);

/** Reads a message stream to its end, telling in `events` when it ended (when Nodemailer would write the end of data). */
const readAll = (raw: Readable, events: string[], to: string) =>
  new Promise<void>((resolve, reject) => {
    raw.on('data', () => {});
    raw.on('end', () => {
      events.push(`data ended ${to}`);
      resolve();
    });
    raw.on('error', reject);
  });

t.test("a message's end of data waits for the record of the one before it to commit", async (t) => {
  const events: string[] = [];
  const { store, commitNext } = slowStore(recipientsOf(4), events);
  const deliver: DeliverMail = async ({ envelope, raw }) => {
    const to = envelope.to[0]!.replace(/@.*/, '').replace('r', 's');
    events.push(`deliver ${to}`);
    // The record of the message before is still uncommitted: commit it only now, once this message has begun.
    setImmediate(() => commitNext());
    await readAll(raw, events, to);
  };
  const sending = run(store, deliver);
  // The last record commits after the last message.
  await t.resolveMatch(
    (async () => {
      while (!events.includes('record s3 sent')) await new Promise((resolve) => setImmediate(resolve));
      commitNext();
      return sending;
    })(),
    { sent: 4 },
  );
  t.same(events, [
    'deliver s0',
    'data ended s0',
    'record s0 sent',
    'deliver s1',
    'committed s0',
    'data ended s1',
    'record s1 sent',
    'deliver s2',
    'committed s1',
    'data ended s2',
    'record s2 sent',
    'deliver s3',
    'committed s2',
    'data ended s3',
    'record s3 sent',
    'committed s3',
  ]);
});

t.test('a refused message is recorded after the record before it, one record at a time', async (t) => {
  const events: string[] = [];
  const { store, commitNext } = slowStore(recipientsOf(3), events);
  const deliver: DeliverMail = async ({ envelope, raw }) => {
    const to = envelope.to[0]!.replace(/@.*/, '').replace('r', 's');
    events.push(`deliver ${to}`);
    if (to === 's1') {
      // Refused at RCPT TO: no data is read; the record of s0 commits afterwards.
      setImmediate(() => commitNext());
      throw Object.assign(new Error('No such user'), { responseCode: 550 });
    }
    setImmediate(() => commitNext());
    await readAll(raw, events, to);
  };
  const sending = run(store, deliver);
  while (!events.includes('record s2 sent')) await new Promise((resolve) => setImmediate(resolve));
  commitNext();
  t.match(await sending, { sent: 2 });
  t.same(events, [
    'deliver s0',
    'data ended s0',
    'record s0 sent',
    'deliver s1',
    'committed s0',
    'record s1 bounced',
    'deliver s2',
    'committed s1',
    'data ended s2',
    'record s2 sent',
    'committed s2',
  ]);
});

t.test('a record that fails leaves the next message unended, and the send fails with it', async (t) => {
  const events: string[] = [];
  const { store, commitNext } = slowStore(recipientsOf(3), events, 's0');
  const deliver: DeliverMail = async ({ envelope, raw }) => {
    const to = envelope.to[0]!.replace(/@.*/, '').replace('r', 's');
    events.push(`deliver ${to}`);
    setImmediate(() => commitNext());
    await readAll(raw, events, to);
  };
  await t.rejects(run(store, deliver), { message: 'the database went away' });
  t.same(events, ['deliver s0', 'data ended s0', 'record s0 sent', 'deliver s1'], 's1 never ended, s2 never begun');
});

t.test('over SMTP, a message whose stream fails is never accepted; the connection goes on', async (t) => {
  const mailbox = await startMailbox(t);
  const smtp = pooledSmtp({ smtpUrl: mailbox.url, from: 'news@example.com' } as never);
  t.teardown(() => smtp.close());
  const composed = await composeNewsletter({ subject: 'S', text: 'Hello.', html: '<p>Hello.</p>' } as never, { name: 'N', address: 'news@example.com' });
  const message = (to: string) => newsletterMail(composed, view, to, 'tok');
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
