import t from 'tap';
import { BOOTSTRAP_KEY, startService, tempDataDir, waitFor, type Service } from '../helpers/app.js';
import { startMailbox } from '../helpers/smtp.js';

// A real server SIGKILLed twice in the middle of a newsletter: each restart resumes the send
// where it stopped; every subscriber gets the post, and at most the one SMTP transaction in
// flight at each kill is sent twice. (bench/newsletter.ts measures 2,000 recipients.)

const SUBSCRIBERS = 300;

const api = async (service: Service, method: string, url: string, body?: unknown) => {
  const response = await fetch(`${service.url}${url}`, {
    method,
    headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, ...(body instanceof FormData || body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body instanceof FormData ? body : body === undefined ? undefined : JSON.stringify(body),
  });
  return response.json();
};

t.test('SIGKILL twice during a send: every address gets the post once, at most one duplicate per kill', async (t) => {
  const mailbox = await startMailbox(t);
  // Slow enough (100 a second) that the kills land mid-send.
  const env = { DATA_DIR: tempDataDir(t), SMTP_URL: mailbox.url, MAIL_FROM: 'news@example.com', MAIL_RATE_PER_MINUTE: '6000', JOB_POLL_MS: '50' };
  const start = async () => {
    const service = await startService(env);
    t.teardown(() => service.child.kill('SIGKILL'));
    return service;
  };
  const began = Date.now();
  let service = await start();
  t.comment(`started at ${Date.now() - began} ms`);
  await api(service, 'PATCH', '/api/v1/site', { newsletter: { enabled: true } });
  const addresses = Array.from({ length: SUBSCRIBERS }, (_, i) => `reader${i}@example.com`);
  const form = new FormData();
  form.append('file', new Blob([`email\n${addresses.join('\n')}\n`], { type: 'text/csv' }), 'list.csv');
  t.equal((await api(service, 'POST', '/api/v1/subscribers/import', form)).data.imported, SUBSCRIBERS);
  const post = await api(service, 'POST', '/api/v1/posts', { title: 'Through the crashes', content: 'Still here.', isDraft: false });
  const id = post.data.post.id as string;

  for (const at of [SUBSCRIBERS / 4, SUBSCRIBERS / 2]) {
    await waitFor(() => mailbox.received.length >= at, `${at} mails to arrive`);
    service.child.kill('SIGKILL');
    t.equal(await service.exited, null, 'killed mid-send');
    t.ok(mailbox.received.length < SUBSCRIBERS, `killed before the end (${mailbox.received.length} received)`);
    service = await start();
    t.comment(`restarted at ${Date.now() - began} ms with ${mailbox.received.length} received`);
  }
  const done = await waitFor(async () => {
    const progress = (await api(service, 'GET', `/api/v1/posts/${id}/newsletter`)).data?.newsletter;
    return progress?.status === 'sent' && progress;
  }, 'the send to finish after the restarts');
  t.match(done, { recipients: SUBSCRIBERS, sent: SUBSCRIBERS, failed: 0, bounced: 0 });

  const counts = new Map<string, number>();
  for (const mail of mailbox.received) for (const to of mail.rcptTo) counts.set(to, (counts.get(to) ?? 0) + 1);
  t.same([...counts.keys()].sort(), [...addresses].sort(), 'every address received it');
  const duplicates = [...counts.values()].reduce((sum, n) => sum + n - 1, 0);
  t.comment(`done at ${Date.now() - began} ms, ${duplicates} duplicates`);
  t.ok(duplicates <= 2, `at most one duplicate per kill (${duplicates})`);
  t.ok(mailbox.received.every((mail) => mail.rcptTo.length === 1), 'one recipient per message');

  service.child.kill('SIGTERM');
  t.equal(await service.exited, 0, 'SIGTERM shuts down cleanly');
});
