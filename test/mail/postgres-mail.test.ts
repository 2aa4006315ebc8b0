import t from 'tap';
import { MAIL_SEND } from '../../src/mail/rules.js';
import { buildTestApp, waitFor } from '../helpers/app.js';
import { postgresTests, startPostgres } from '../helpers/postgres.js';
import { startMailbox } from '../helpers/smtp.js';

// Mail on PostgreSQL: the same queue, claimed with SKIP LOCKED by two instances sharing the
// database; every message arrives exactly once.

postgresTests(() => {
  t.test('two instances over one PostgreSQL send each queued message once, retries included', async (t) => {
    const url = await startPostgres(t);
    const mailbox = await startMailbox(t);
    const env = { DATABASE_URL: url, SMTP_URL: mailbox.url, MAIL_FROM: 'no-reply@example.com' };
    const first = await buildTestApp(t, env, { mail: { backoffBaseMs: 20 } });
    const second = await buildTestApp(t, env, { mail: { backoffBaseMs: 20 } });
    t.equal(first.app.backend.kind, 'postgres');
    await first.app.listen({ port: 0, host: '127.0.0.1' });
    await second.app.listen({ port: 0, host: '127.0.0.1' });

    mailbox.refuseNext(1, 421);
    const queued = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 ? first : second).app.mail.enqueue(first.site.id, { to: `reader${i}@example.com`, subject: `Message ${i}`, text: `Hello ${i}.`, html: `<p>Hello ${i}.</p>` })),
    );
    await waitFor(() => mailbox.received.length >= 12, 'twelve messages');
    await waitFor(async () => (await first.count("select count(*) as n from jobs where kind = ? and status = 'succeeded'", MAIL_SEND)) === 12, 'every job to succeed');
    await Promise.all([first.app.mailLoop.whenIdle(), second.app.mailLoop.whenIdle()]);
    t.equal(mailbox.received.length, 12, 'none twice');
    const payloads = await first.rows<{ payload: { text?: string; html?: string; sent?: boolean } }>('select payload from jobs where kind = ?', MAIL_SEND);
    t.ok(payloads.every(({ payload }) => payload.sent === true && payload.text === undefined && payload.html === undefined), 'sent messages keep no part in the jobs table');
    t.same(new Set(mailbox.received.map((mail) => mail.parsed.messageId)), new Set(queued.map((q) => q.messageId)));
  });
});
