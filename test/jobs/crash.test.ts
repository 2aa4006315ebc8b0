import t from 'tap';
import { BOOTSTRAP_KEY, failedStart, spawnServer, startService, tempDataDir, waitFor, type Service } from '../helpers/app.js';
import { startFakeOllama, streamAnswer, validPost } from '../helpers/fake-ollama.js';

const api = (service: Service, url: string, init: RequestInit = {}) =>
  fetch(`${service.url}${url}`, { ...init, headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, 'content-type': 'application/json', ...init.headers } }).then(
    (res) => res.json(),
  );

t.test('SIGKILL while tasks run: a new process finishes every task with exactly one post each', async (t) => {
  let slow = true;
  const ollama = await startFakeOllama(t, {
    chat: (_call, body, _req, res) => {
      // Never answered while the first process runs, so it is killed mid-generation (its
      // sockets close with it); quick afterwards.
      if (!slow) setTimeout(() => streamAnswer(res, body.model, JSON.stringify(validPost)), 10);
    },
  });
  const dataDir = tempDataDir(t);
  const env = { DATA_DIR: dataDir, GENERATOR: 'ollama', OLLAMA_HOST: ollama.url, JOB_POLL_MS: '50', JOB_CONCURRENCY: '2', JOB_LEASE_MS: '60000' };

  const first = await startService(env);
  t.teardown(() => first.child.kill('SIGKILL'));
  const posts = Array.from({ length: 6 }, (_, i) => ({ topic: `Crash-safe topic ${i}` }));
  const accepted = await api(first, '/api/v1/posts/batch', { method: 'POST', body: JSON.stringify({ posts }) });
  const { batchId, taskIds } = accepted.data;
  t.equal(taskIds.length, 6);

  await waitFor(async () => (await api(first, `/api/v1/tasks?status=running&batchId=${batchId}`)).data.pagination.total === 2, 'two running tasks');
  await ollama.chatsArrived(2);
  first.child.kill('SIGKILL');
  t.equal(await first.exited, null, 'killed, no clean exit');

  slow = false;
  const second = await startService(env);
  t.teardown(() => second.child.kill('SIGKILL'));
  const third = await failedStart(spawnServer({ PORT: '0', ...env }));
  t.equal(third.code, 1, 'a second server on the same data folder refuses to start');
  t.match(third.stderr, new RegExp(`Another server \\(pid ${second.child.pid} on [^)]+\\) is already running`));
  // Well within the 60 s lease: tasks left running by the dead process are returned at start-up.
  const done = await waitFor(async () => {
    const list = (await api(second, `/api/v1/tasks?batchId=${batchId}&limit=100`)).data.tasks as { status: string; postId: string; attempts: number; id: string }[];
    return list.every((task) => task.status === 'succeeded') && list;
  }, 'every task succeeded', 30_000);

  t.equal(done.length, 6);
  const postIds = new Set(done.map((task) => task.postId));
  t.equal(postIds.size, 6, 'one distinct post per task');
  const listed = (await api(second, '/api/v1/posts?status=all&limit=100')).data;
  t.equal(listed.pagination.total, 6, 'exactly six posts exist');
  t.same(new Set(listed.posts.map((p: { id: string }) => p.id)), postIds);
  t.ok(done.filter((task) => task.attempts === 2).length >= 2, 'the interrupted tasks ran a second attempt');

  second.child.kill('SIGTERM');
  t.equal(await second.exited, 0, 'SIGTERM shuts down cleanly');
});
