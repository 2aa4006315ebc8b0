import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { BOOTSTRAP_KEY, startService, tempDataDir, waitFor, type Service } from '../helpers/app.js';
import { startReceiver } from '../helpers/receiver.js';

const api = async (service: Service, path: string, init: RequestInit = {}) => {
  const res = await fetch(`${service.url}${path}`, { ...init, headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, 'content-type': 'application/json', ...init.headers } });
  return res.json();
};

const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_BASE_MS: '50', JOB_POLL_MS: '50', LOG_LEVEL: 'info' };

for (const when of ['while the attempt is in flight', 'as soon as the publish is answered'] as const) {
  t.test(`SIGKILL between a publish and its delivery (${when}): after a restart it arrives, once or repeated with the same webhook-id`, async (t) => {
    let answering = when === 'as soon as the publish is answered';
    const receiver = await startReceiver(t, (_receipt, _index, res) => {
      // While the first process runs, the in-flight case never answers: it is killed mid-attempt.
      if (answering) res.writeHead(200).end('ok');
    });
    const dataDir = tempDataDir(t);
    const env = { ...ENV, DATA_DIR: dataDir };

    const first = await startService(env);
    t.teardown(() => first.child.kill('SIGKILL'));
    const hook = (await api(first, '/api/v1/webhooks', { method: 'POST', body: JSON.stringify({ url: receiver.url, events: ['post.published'] }) })).data.webhook;
    const created = await api(first, '/api/v1/posts', { method: 'POST', body: JSON.stringify({ title: 'Published, then a crash', isDraft: false }) });
    t.equal(created.success, true);
    if (when === 'while the attempt is in flight') await receiver.received(1);
    first.child.kill('SIGKILL');
    t.equal(await first.exited, null, 'killed, no clean exit');
    const seenBeforeRestart = receiver.receipts.length;

    answering = true;
    const second = await startService(env);
    t.teardown(() => second.child.kill('SIGKILL'));
    const [delivery] = await waitFor(async () => {
      const list = (await api(second, `/api/v1/webhooks/${hook.id}/deliveries`)).data.deliveries;
      return list[0]?.status === 'succeeded' && list;
    }, 'the delivery succeeded after the restart', 30_000);

    const receipts = receiver.receipts;
    t.ok(receipts.length >= 1 && receipts.length <= 2, `received ${receipts.length} time(s) (${seenBeforeRestart} before the restart)`);
    t.same(new Set(receipts.map((r) => r.headers['webhook-id'])), new Set([delivery.id]), 'every receipt has the same webhook-id');
    for (const receipt of receipts) {
      const event = new Webhook(hook.secret).verify(receipt.body, receipt.headers as Record<string, string>) as { type: string; data: { post: { id: string } } };
      t.equal(event.type, 'post.published');
      t.equal(event.data.post.id, created.data.post.id);
    }
    const all = (await api(second, `/api/v1/webhooks/${hook.id}/deliveries`)).data;
    t.equal(all.pagination.total, 1, 'one delivery, never a second one for the same event');

    second.child.kill('SIGTERM');
    t.equal(await second.exited, 0, 'a clean stop');
  });
}
