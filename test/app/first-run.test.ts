import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { runAdmin } from '../../src/admin/cli.js';
import { loadConfig } from '../../src/config.js';
import { lockDataDir } from '../../src/db/lock.js';
import { BOOTSTRAP_KEY, buildTestApp, failedStart, projectRoot, spawnServer, startService, tempDataDir, waitFor } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

/** A TCP port something else is listening on, for as long as the test runs. */
async function busyPort(t: { teardown(fn: () => unknown): void }): Promise<number> {
  const blocker = net.createServer();
  blocker.listen(0, '127.0.0.1');
  await once(blocker, 'listening');
  t.teardown(() => blocker.close());
  return (blocker.address() as net.AddressInfo).port;
}

t.test('a busy port is a one-line error naming PORT, and the first key is not spent', async (t) => {
  const dataDir = tempDataDir(t);
  const port = await busyPort(t);
  const env = { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', GENERATOR: 'builtin', LOG_LEVEL: 'silent' };
  const child = spawnServer(env);
  let stdout = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  const failed = await failedStart(child);
  t.equal(failed.code, 1);
  t.equal(failed.stderr.trim().split('\n').length, 1, 'one line');
  t.match(failed.stderr, new RegExp(`Port ${port} .*already in use \\(PORT\\)`));
  t.notMatch(stdout, /blog_/, 'no key shown');

  // The next start on a free port creates the site and shows its key.
  const next = spawnServer({ ...env, PORT: '0' });
  t.teardown(() => next.kill('SIGKILL'));
  let output = '';
  next.stdout!.on('data', (chunk) => (output += chunk));
  await waitFor(() => /blog_[A-Za-z0-9_-]{43}/.test(output), 'the first key printed');
  t.match(output, /blog-admin site list/, 'the message names the CLI');
});

t.test('an unusable DATA_DIR is a one-line error naming it and the fix', async (t) => {
  const file = path.join(tempDataDir(t), 'a-file');
  fs.writeFileSync(file, 'not a folder');
  const failed = await failedStart(spawnServer({ DATA_DIR: path.join(file, 'data'), PORT: '0', LOG_LEVEL: 'silent' }));
  t.equal(failed.code, 1);
  t.equal(failed.stderr.trim().split('\n').length, 1, 'one line, no stack');
  t.match(failed.stderr, /DATA_DIR .*a-file\/data.*uid 1000/);
});

t.test('the data-folder lock is held by the kernel, not by a pid file', async (t) => {
  const dataDir = tempDataDir(t);
  const release = lockDataDir(dataDir, 'first holder');
  t.throws(() => lockDataDir(dataDir), /Another server \(first holder\) is already running/, 'a second claim in the same process');
  // A holder file that names this very pid (as a container's pid 1 would) changes nothing.
  fs.writeFileSync(path.join(dataDir, 'server.lock.holder'), `pid ${process.pid}`);
  t.throws(() => lockDataDir(dataDir), { name: 'DataDirLockedError' });
  release();
  const again = lockDataDir(dataDir);
  // Held without a byte written (a restart on a full disk must get it): no journal, an empty file.
  t.notOk(fs.existsSync(path.join(dataDir, 'server.lock-journal')), 'no journal');
  t.equal(fs.statSync(path.join(dataDir, 'server.lock')).size, 0, 'the lock file stays empty');
  again();

  // Another process holding the lock refuses this one until it dies, however it dies.
  const holder = spawn(process.execPath, [
    '--input-type=module',
    '-e',
    `const { default: Database } = await import(${JSON.stringify(path.join(projectRoot, 'node_modules/better-sqlite3/lib/index.js'))});
     const db = new Database(${JSON.stringify(path.join(dataDir, 'server.lock'))}, { timeout: 0 });
     db.pragma('locking_mode = EXCLUSIVE'); db.exec('BEGIN EXCLUSIVE'); console.log('locked'); setInterval(() => {}, 1000);`,
  ]);
  t.teardown(() => holder.kill('SIGKILL'));
  let said = '';
  holder.stdout.on('data', (chunk) => (said += chunk));
  await waitFor(() => said.includes('locked'), 'the other process holds the lock');
  t.throws(() => lockDataDir(dataDir), { name: 'DataDirLockedError' });
  holder.kill('SIGKILL');
  await once(holder, 'exit');
  lockDataDir(dataDir)();
  t.pass('free again once the holder was killed');
});

t.test('the admin CLI: no database it was not asked for, clear misses, tables and JSON', async (t) => {
  const dataDir = tempDataDir(t);
  const config = loadConfig({ DATA_DIR: dataDir });
  await t.rejects(runAdmin(['site', 'list'], config), /No database at .*blog\.db: check DATA_DIR/);
  t.notOk(fs.existsSync(path.join(dataDir, 'blog.db')), 'site list created nothing');

  const lines: string[] = [];
  await runAdmin(['site', 'create', '--name', 'Travel Notes'], config, (line) => lines.push(line));
  t.match(lines[0], /\(handle travel-notes\)/);
  lines.length = 0;
  await runAdmin(['site', 'list'], config, (line) => lines.push(line));
  t.match(lines[0], /^ID\s+NAME\s+HANDLE\s+URL\s+CREATED$/, 'a header row');
  t.match(lines[1], /Travel Notes\s+travel-notes\s+-\s+\d{4}-/);
  lines.length = 0;
  await runAdmin(['site', 'list', '--json'], config, (line) => lines.push(line));
  const [site] = JSON.parse(lines.join('\n'));
  t.equal(site.handle, 'travel-notes');
  await t.rejects(runAdmin(['key', 'list', '--site', 'nope'], config), { code: 'NOT_FOUND', message: 'site not found' });
  await t.rejects(runAdmin(['key', 'revoke', 'nope'], config), { code: 'NOT_FOUND', message: 'key not found' });
  lines.length = 0;
  await runAdmin(['key', 'list', '--site', site.id], config, (line) => lines.push(line));
  t.match(lines[0], /^ID\s+PREFIX\s+CREATED\s+STATE$/);
  t.match(lines[1], /blog_\S+…\s+\S+\s+active$/);
});

t.test('the built CLI runs as the package bin, without TypeScript', async (t) => {
  const pkg = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8'));
  t.equal(pkg.bin['blog-admin'], 'dist/src/admin/cli.js');
  t.equal(pkg.scripts.admin, 'node dist/src/admin/cli.js', 'npm run admin runs the built code, no rebuild');
  t.match(fs.readFileSync(path.join(projectRoot, 'src/admin/cli.ts'), 'utf8'), /^#!\/usr\/bin\/env node\n/, 'a shebang for the bin');
});

t.test('one rule for errors clients meet: enums, folding filters, unknown file ids, models, file parts', async (t) => {
  const ctx = await buildTestApp(t);
  for (const url of ['/api/v1/posts?status=bogus']) {
    const res = await ctx.call({ method: 'GET', url });
    t.equal(res.statusCode, 400);
    t.same(res.json().error.details, [{ path: '/querystring/status', message: 'must be one of: draft, scheduled, published, unlisted, all' }]);
  }
  const post = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Café culture', category: 'Travel', tags: ['Crème'] } })).json().data.post;
  const visibility = await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${post.id}`, payload: { visibility: 'secret' } });
  t.same(visibility.json().error.details, [{ path: '/body/visibility', message: 'must be one of: public, unlisted' }]);

  for (const query of ['category=travel', 'category=TRAVEL', 'q=cafe', 'q=CAFÉ', 'tag=creme']) {
    t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts?${encodeURI(query)}` })).json().data.pagination.total, 1, query);
  }

  const search = await ctx.call({ method: 'GET', url: '/api/v1/knowledge/search?q=coffee&fileIds=missing-1,missing-2' });
  t.equal(search.statusCode, 400);
  t.match(search.json().error.message, /missing-1, missing-2/);

  const model = await ctx.call({ method: 'POST', url: '/api/v1/posts/batch', payload: { posts: [{ topic: 'Espresso', model: 'gpt-4' }] } });
  t.equal(model.statusCode, 400, 'a model the generator lacks is refused at submission');
  t.equal(model.json().error.code, 'UNKNOWN_MODEL');
  t.equal((await ctx.call({ method: 'POST', url: '/api/v1/posts/batch', payload: { posts: [{ topic: 'Espresso', model: 'builtin' }] } })).statusCode, 202);

  const ids = Array.from({ length: 50 }, (_, i) => `nope-${i}`);
  const many = await ctx.call({ method: 'POST', url: '/api/v1/posts/batch', payload: { posts: [{ topic: 'x', selectedFileIds: ids }] } });
  t.equal(many.json().error.details.length, 20, 'a long list of unknown ids is capped');
  t.match(many.json().error.message, /and 30 more$/);

  const body = multipart([
    { name: 'file', filename: 'a.txt', content: 'one' },
    { name: 'file', filename: 'b.txt', content: 'two' },
  ]);
  const two = await ctx.call({ method: 'POST', url: '/api/v1/knowledge', headers: body.headers, payload: body.payload });
  t.equal(two.statusCode, 400);
  t.same(two.json().error.details, [{ path: '/body/file', message: 'exactly one file part named "file"' }]);
});

t.test('a service on SQLite starts and serves pages without loading what only some requests use', async (t) => {
  const dataDir = tempDataDir(t);
  const record = path.join(dataDir, 'modules.json');
  const recorder = new URL('../helpers/record-modules.mjs', import.meta.url).href;
  const service = await startService({
    DATA_DIR: dataDir,
    GENERATOR: 'builtin',
    SMTP_URL: 'smtp://127.0.0.1:2525',
    MAIL_FROM: 'blog@example.test',
    RECORD_MODULES_TO: record,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${recorder}`,
  });
  const authorization = `Bearer ${BOOTSTRAP_KEY}`;
  const created = await fetch(`${service.url}/api/v1/posts`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Hello', content: 'A first post.', isDraft: false }),
  });
  t.equal(created.status, 201, 'a post published through the API');
  const site = await (await fetch(`${service.url}/api/v1/site`, { headers: { authorization } })).json();
  t.equal((await fetch(`${service.url}/sites/${site.data.site.handle}/`)).status, 200, 'the index page');
  service.child.kill('SIGTERM');
  t.equal(await service.exited, 0);
  const loaded: string[] = JSON.parse(fs.readFileSync(record, 'utf8'));
  const packages = new Set(loaded.map((file) => file.match(/^(@[^/]+\/[^/]+|[^/]+)/)![1]));
  // What it needs is there: the record is of this service.
  for (const needed of ['fastify', 'better-sqlite3', 'drizzle-orm', 'markdown-it']) t.ok(packages.has(needed), `${needed} loaded`);
  // PostgreSQL's driver, images, mail (set up, but nothing sent), Word and PDF readers, S3: loaded when first used.
  for (const unused of ['pg', 'sharp', 'nodemailer', 'mammoth', 'word-extractor', 'unpdf', '@aws-sdk/client-s3']) t.notOk(packages.has(unused), `${unused} not loaded`);
  t.notOk(loaded.some((file) => file.startsWith('drizzle-orm/node-postgres/')), "drizzle's PostgreSQL driver not loaded");
});
