/**
 * A restart on a full disk (a container's restart policy after its disk filled up): the real
 * server, on a small tmpfs filled to the last byte, must start, serve its readers (public
 * pages, feeds, API reads), refuse writes with 507 in the envelope, say `storage: full` on
 * /ready, hold back its background work, and resume all of it once space is back.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { BOOTSTRAP_KEY, onPostgres, startService, waitFor, type Service } from '../helpers/app.js';

const TMPFS_SIZE = '24m';

/** Mounts a tmpfs of TMPFS_SIZE on a new folder, or says why it cannot be done here. */
function mountTmpfs(): { dir: string; unmount: () => void } | string {
  if (process.platform !== 'linux') return 'tmpfs is Linux only';
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blog-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    return `cannot mount a tmpfs here (${String((error as { stderr?: Buffer }).stderr ?? error).trim().split('\n')[0]})`;
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Fills the file system of `dir` to the last byte with one file, in ever smaller writes. */
function fillDisk(file: string): void {
  const fd = fs.openSync(file, 'w');
  try {
    for (let size = 1024 * 1024; size >= 1; size = Math.floor(size / 4)) {
      const block = Buffer.alloc(size, 1);
      for (;;) {
        try {
          fs.writeSync(fd, block);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
          break;
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}

const stopped = async (service: Service) => {
  service.child.kill('SIGTERM');
  return service.exited;
};

const mounted = onPostgres ? 'runs on SQLite only' : mountTmpfs();

t.test('a server restarted on a full disk starts, serves reads, refuses writes with 507, and resumes', { skip: typeof mounted === 'string' ? mounted : false }, async (t) => {
  const { dir, unmount } = mounted as Exclude<typeof mounted, string>;
  t.teardown(unmount);
  const dataDir = path.join(dir, 'data');
  const filler = path.join(dir, 'filler');
  const env = { DATA_DIR: dataDir, GENERATOR: 'builtin', BUILTIN_WORKERS: '0', JOB_POLL_MS: '100' };
  const api = (service: Service, method: string, url: string, body?: unknown) =>
    fetch(`${service.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  // A site with a published post, and a batch task due once the disk is full.
  const first = await startService(env);
  t.teardown(() => first.child.kill('SIGKILL'));
  const created = await api(first, 'POST', '/api/v1/posts', { title: 'Read on a full disk', content: 'Still **here**.', isDraft: false });
  t.equal(created.status, 201);
  const post = (await created.json()).data.post;
  const handle = (await (await api(first, 'GET', '/api/v1/site')).json()).data.site.handle;
  const due = new Date(Date.now() + 4000).toISOString();
  const batch = await api(first, 'POST', '/api/v1/posts/batch', { posts: [{ topic: 'Espresso at home', scheduledFor: due }] });
  t.equal(batch.status, 202, 'a task is scheduled');
  const [taskId] = (await batch.json()).data.taskIds;
  t.equal(await stopped(first), 0, 'stopped cleanly (its write-ahead log and shared-memory files are gone)');

  fillDisk(filler);
  t.ok(fs.statfsSync(dir).bavail === 0, 'not a byte left');

  // The restart: nothing it needs to start takes a byte.
  const second = await startService(env);
  t.teardown(() => second.child.kill('SIGKILL'));
  const ready = await fetch(`${second.url}/ready`);
  t.equal(ready.status, 200, 'ready: its readers are served');
  t.match(await ready.json(), { storage: 'full', database: 'ok' });

  const reads = [
    `/sites/${handle}/`,
    `/sites/${handle}/${post.slug}/`,
    `/sites/${handle}/rss.xml`,
    `/sites/${handle}/atom.xml`,
    `/sites/${handle}/feed.json`,
  ];
  for (const url of reads) t.equal((await fetch(`${second.url}${url}`)).status, 200, `GET ${url}`);
  t.match(await (await fetch(`${second.url}/sites/${handle}/${post.slug}/`)).text(), '<strong>here</strong>');
  for (const url of ['/api/v1/posts', `/api/v1/posts/${post.id}`, '/api/v1/site', `/api/v1/tasks/${taskId}`, '/api/v1/stats']) {
    t.equal((await api(second, 'GET', url)).status, 200, `GET ${url}`);
  }

  const refused = await api(second, 'POST', '/api/v1/posts', { title: 'Not saved', content: 'x'.repeat(100_000) });
  t.equal(refused.status, 507);
  const envelope = await refused.json();
  t.match(envelope, { success: false, error: { code: 'INSUFFICIENT_STORAGE', requestId: refused.headers.get('x-request-id') } });

  // The task comes due on the full disk: it waits, it does not fail.
  await waitFor(async () => (await (await fetch(`${second.url}/ready`)).json()).jobs === 'waiting', 'the job loop to wait for space');
  const waiting = (await (await api(second, 'GET', `/api/v1/tasks/${taskId}`)).json()).data.task;
  t.not(waiting.status, 'failed', `the task waits (${waiting.status})`);

  // Space is back: writes work, the task is done, /ready says ok.
  fs.rmSync(filler);
  t.equal((await api(second, 'POST', '/api/v1/posts', { title: 'Saved now' })).status, 201, 'a write works again');
  await waitFor(async () => (await (await api(second, 'GET', `/api/v1/tasks/${taskId}`)).json()).data.task.status === 'succeeded', 'the task to succeed', 120_000);
  await waitFor(async () => (await (await fetch(`${second.url}/ready`)).json()).storage === 'ok', '/ready to say storage: ok', 60_000);
  t.equal(await stopped(second), 0, 'stops cleanly');
});
