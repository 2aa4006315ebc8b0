/**
 * Knowledge files in an S3-compatible bucket (STORAGE_URL=s3://...), against a real s3rver on
 * loopback: uploads land under the prefix and the spec's key, extraction reads the object,
 * nothing of an upload is written under DATA_DIR/storage, deletes remove the object, and a
 * store that cannot be reached answers 503 STORAGE_UNAVAILABLE without losing or leaving a row.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { DeleteObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import t from 'tap';
import { ConfigError, loadConfig, redactUrl } from '../../src/config.js';
import { SOCKET_IDLE_TIMEOUT_MS, temporaryFolderFor, S3Storage } from '../../src/knowledge/s3-storage.js';
import { FileStorage, StoreStartError, createObjectStore, describeStore } from '../../src/knowledge/storage.js';
import { BOOTSTRAP_KEY, onPostgres, buildTestApp, failedStart, fixturesDir, spawnServer, startApp, startService, tempDataDir, testConfig, waitFor, type TestApp } from '../helpers/app.js';
import { closedPortUrl } from '../helpers/fake-ollama.js';
import { knowledgeRows } from '../helpers/knowledge-rows.js';
import { multipart } from '../helpers/multipart.js';
import { S3_CREDENTIALS, startS3, type S3Fixture } from '../helpers/s3.js';

const fixture = (relative: string) => fs.readFileSync(path.join(fixturesDir, relative));
const upload = (ctx: TestApp, filename: string, content: Buffer | string) => {
  const form = multipart([{ name: 'file', filename, content }]);
  return ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers });
};
const getFile = async (ctx: TestApp, id: string) => (await ctx.call({ method: 'GET', url: `/api/v1/knowledge/${id}` })).json().data?.knowledge;
const listed = async (ctx: TestApp) => (await ctx.call({ method: 'GET', url: '/api/v1/knowledge' })).json().data.items.map((item: { id: string }) => item.id);
const searchText = async (ctx: TestApp, q: string) =>
  (await ctx.call({ method: 'GET', url: `/api/v1/knowledge/search?q=${encodeURIComponent(q)}` })).json().data.results.map((r: { text: string }) => r.text).join('\n');
/** The bucket's key of a stored file: the prefix, then the spec's s3Key. */
const objectKey = (s3: S3Fixture, s3Key: string) => `${s3.prefix}/${s3Key}`;
/** Files this process holds open under `dir` (Linux; elsewhere none are seen). */
const openFilesUnder = (dir: string) =>
  fs.existsSync('/proc/self/fd')
    ? fs
        .readdirSync('/proc/self/fd')
        .map((fd) => {
          try {
            return fs.readlinkSync(`/proc/self/fd/${fd}`);
          } catch {
            return '';
          }
        })
        .filter((target) => target.startsWith(dir))
    : [];
/** Temporary files of the app's S3 store (received uploads, copies for extraction). */
const temporaryFiles = (ctx: TestApp) => fs.readdirSync(temporaryFolderFor(ctx.dataDir));

t.test('uploads go to the bucket under the prefix and the spec key, are indexed from there, searched and used by generation', async (t) => {
  const s3 = await startS3(t);
  const ctx = await buildTestApp(t, s3.env, { realExtractor: true });
  const files: [string, string, string][] = [
    ['text/release-notes-2026.txt', 'release-notes-2026.txt', 'columnar cache'],
    ['text/coffee-brewing-guide.md', 'coffee-brewing-guide.md', '60 grams of coffee per litre'],
    ['pdf/fd_ins_8859.pdf', 'fd_ins_8859.pdf', 'District of Columbia'],
    ['word/test03.docx', 'test03.docx', 'Apache v2.0'],
  ];
  const stored = new Map<string, { id: string; s3Key: string }>();
  for (const [file, name] of files) {
    const res = await upload(ctx, name, fixture(file));
    t.equal(res.statusCode, 201, file);
    const item = res.json().data.knowledge;
    t.equal(item.s3Key, `${ctx.site.id}/knowledge/${item.id}.${path.extname(name).slice(1)}`, 'the spec key, unchanged');
    t.ok(await s3.exists(objectKey(s3, item.s3Key)), `${file}: the object is in the bucket once the upload answers`);
    t.equal(await ctx.app.objectStore.exists(item.s3Key), true);
    t.same(await s3.read(objectKey(s3, item.s3Key)), fixture(file), `${file}: stored byte for byte`);
    stored.set(name, item);
  }
  t.same(await s3.keys(), [...stored.values()].map((item) => objectKey(s3, item.s3Key)).sort(), 'nothing else in the bucket');
  const head = await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: objectKey(s3, stored.get('fd_ins_8859.pdf')!.s3Key) }));
  t.equal(head.ContentType, 'application/pdf', 'the object carries its media type');

  await ctx.app.indexer.whenIdle();
  for (const [file, name, phrase] of files) {
    const item = await getFile(ctx, stored.get(name)!.id);
    t.equal(item.status, 'indexed', `${file} indexed ${item.error ?? ''}`);
    t.ok(item.chunkCount >= 1);
    t.match(await searchText(ctx, phrase), phrase, `${file}: "${phrase}" is found`);
  }
  t.notOk(fs.existsSync(path.join(ctx.dataDir, 'storage')), 'nothing written under DATA_DIR/storage');
  t.same(temporaryFiles(ctx), [], 'temporary copies removed after extraction');

  const generated = await ctx.call({ method: 'POST', url: '/api/v1/posts/generate', payload: { topic: 'Brewing coffee: grams of coffee per litre', length: 'short' } });
  t.equal(generated.statusCode, 201);
  const post = (await ctx.call({ method: 'GET', url: `/api/v1/posts/${generated.json().post.id}` })).json().data.post;
  t.match(post.content, /coffee-brewing-guide\.md/, 'generation is grounded in the stored file');

  const ready = await ctx.call({ method: 'GET', url: '/ready' });
  t.equal(ready.statusCode, 200);
  t.match(ready.json(), { status: 'ready', storage: 'ok', store: { kind: 's3', bucket: 'blog', prefix: 'blog', endpoint: s3.endpoint, region: 'us-east-1' } });
  t.notMatch(ready.body, /S3RVER/, 'no credentials on /ready');

  const deleted = stored.get('coffee-brewing-guide.md')!;
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/knowledge/${deleted.id}` })).statusCode, 200);
  t.notOk(await s3.exists(objectKey(s3, deleted.s3Key)), 'delete removes the object');
  t.equal(await getFile(ctx, deleted.id), undefined);
  t.notMatch(await searchText(ctx, '60 grams of coffee per litre'), /60 grams/, 'and its index');
  t.equal((await s3.keys()).length, 3);
});

t.test('a 10 MiB upload goes up in parts; refusals and quotas leave nothing in the bucket', async (t) => {
  const s3 = await startS3(t, { prefix: '' });
  const ctx = await buildTestApp(t, { ...s3.env, SITE_STORAGE_QUOTA_MB: '12' });
  const tenMiB = Buffer.alloc(10 * 1024 * 1024, 'Espresso is brewed by forcing hot water through finely ground coffee.\n');
  const big = await upload(ctx, 'big.txt', tenMiB);
  t.equal(big.statusCode, 201);
  const item = big.json().data.knowledge;
  t.same(await s3.keys(), [item.s3Key], 'no prefix: the spec key is the object key');
  t.equal((await s3.read(item.s3Key)).length, tenMiB.length, 'whole');

  t.equal((await upload(ctx, 'fake.pdf', 'just text')).statusCode, 415);
  t.equal((await upload(ctx, 'empty.txt', '')).statusCode, 400);
  t.equal((await upload(ctx, 'bigger.txt', Buffer.concat([tenMiB, Buffer.from('x')]))).json().error.code, 'FILE_TOO_LARGE');
  await ctx.app.indexer.whenIdle();
  t.equal((await getFile(ctx, item.id)).status, 'indexed');
  const overQuota = await upload(ctx, 'more.txt', Buffer.alloc(3 * 1024 * 1024, 'More notes on espresso.\n'));
  t.equal(overQuota.statusCode, 413);
  t.equal(overQuota.json().error.code, 'QUOTA_EXCEEDED', 'quotas hold on the bucket too');
  t.same(await s3.keys(), [item.s3Key], 'nothing of the refused uploads reached the bucket');
  t.same(await listed(ctx), [item.id]);
  t.same(temporaryFiles(ctx), []);
  t.notOk(fs.existsSync(path.join(ctx.dataDir, 'storage')));
});

t.test('an unreachable store: uploads answer 503 with no row, deletes fail keeping the row, indexing waits; all resume when it is back', async (t) => {
  const s3 = await startS3(t);
  const ctx = await buildTestApp(t, s3.env, { indexer: { retryBaseMs: 20, retryMaxMs: 100 } });
  const kept = (await upload(ctx, 'kept.txt', 'Cold brew steeps for twelve hours in the fridge.')).json().data.knowledge;
  await ctx.app.indexer.whenIdle();
  t.equal((await getFile(ctx, kept.id)).status, 'indexed');

  // A row that cannot be written (the database locked by another program) takes its object back.
  if (!onPostgres) {
    ctx.sqlite.exec('BEGIN EXCLUSIVE');
    ctx.sqlite.prepare("update sites set name = name || '' where 0").run();
    const locked = await upload(ctx, 'locked.txt', 'Written while the database is locked.');
    ctx.sqlite.exec('ROLLBACK');
    t.equal(locked.statusCode, 503);
    t.equal(locked.json().error.code, 'DATABASE_BUSY');
    t.same(await s3.keys(), [objectKey(s3, kept.s3Key)], 'no object without its row');
    t.same(temporaryFiles(ctx), []);
  }

  await s3.stop();
  const refused = await upload(ctx, 'refused.txt', 'Nitro cold brew is served from a tap.');
  t.equal(refused.statusCode, 503);
  t.equal(refused.json().success, false);
  t.equal(refused.json().error.code, 'STORAGE_UNAVAILABLE');
  t.match(refused.json().error.message, /file store cannot be reached: the file was not saved/);
  t.equal(refused.json().error.requestId, refused.headers['x-request-id']);
  const bigRefused = await upload(ctx, 'refused-big.txt', Buffer.alloc(6 * 1024 * 1024, 'Nitro cold brew is served from a tap.\n'));
  t.equal(bigRefused.json().error?.code, 'STORAGE_UNAVAILABLE', 'a multipart upload too');
  t.same(await listed(ctx), [kept.id], 'no row for the refused uploads');
  t.same(temporaryFiles(ctx), [], 'nor their temporary files');
  t.same(openFilesUnder(temporaryFolderFor(ctx.dataDir)), [], 'nor an open file descriptor');

  const ready = await ctx.call({ method: 'GET', url: '/ready' });
  t.equal(ready.statusCode, 200, 'still ready: posts, reads and search do not need the store');
  t.match(ready.json(), { storage: 'unreachable', store: { kind: 's3' } });

  const failedDelete = await ctx.call({ method: 'DELETE', url: `/api/v1/knowledge/${kept.id}` });
  t.equal(failedDelete.statusCode, 503);
  t.equal(failedDelete.json().error.code, 'STORAGE_UNAVAILABLE');
  t.match(failedDelete.json().error.message, /nothing was deleted/);
  t.equal((await getFile(ctx, kept.id)).status, 'indexed', 'the row is kept');
  t.match(await searchText(ctx, 'cold brew'), /twelve hours/, 'and so is its index');

  // Indexing waits for the store (as for a full disk) rather than failing the file.
  await knowledgeRows(ctx.app).markUploaded(kept.id);
  ctx.app.indexer.enqueue(kept.id);
  await waitFor(() => ctx.app.indexer.status().waiting?.reason === 'storage-unavailable', 'indexing to wait for the store');
  t.match(await ctx.app.readiness.check(), { indexing: 'waiting', storage: 'unreachable' });
  t.equal((await getFile(ctx, kept.id)).status, 'uploaded', 'left pending, not failed');

  await s3.start();
  // An attempt caught by the restart on a connection to the old server gives up only at the
  // SDK's socket idle timeout: that, plus the backoff, is the bound on resuming.
  await waitFor(async () => (await getFile(ctx, kept.id)).status === 'indexed', 'indexing to resume once the store is back', SOCKET_IDLE_TIMEOUT_MS + 10_000);
  await waitFor(async () => (await ctx.app.readiness.check()).storage === 'ok', '/ready to see the store back');
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/knowledge/${kept.id}` })).statusCode, 200, 'the delete works once the store is back');
  t.notOk(await s3.exists(objectKey(s3, kept.s3Key)));
  t.same(await listed(ctx), []);
  t.equal((await upload(ctx, 'again.txt', 'Nitro cold brew is served from a tap.')).statusCode, 201);
  await ctx.app.indexer.whenIdle();
});

t.test('an object gone from the bucket fails its file with a readable error', async (t) => {
  const s3 = await startS3(t);
  const ctx = await buildTestApp(t, s3.env);
  const item = (await upload(ctx, 'gone.txt', 'Turkish coffee is boiled three times.')).json().data.knowledge;
  await ctx.app.indexer.whenIdle();
  await s3.client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: objectKey(s3, item.s3Key) }));
  t.equal(await ctx.app.objectStore.exists(item.s3Key), false);
  await knowledgeRows(ctx.app).markUploaded(item.id);
  ctx.app.indexer.enqueue(item.id);
  await ctx.app.indexer.whenIdle();
  const failed = await getFile(ctx, item.id);
  t.equal(failed.status, 'failed');
  t.match(failed.error, /upload the file again/);
  t.same(temporaryFiles(ctx), []);
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/knowledge/${item.id}` })).statusCode, 200, 'deleting a file whose object is gone works');
});

t.test('start-up: a missing bucket stops the server with one line naming it', async (t) => {
  const s3 = await startS3(t);
  const url = s3.url.replace('s3://blog/', 's3://no-such-bucket/');
  const dataDir = tempDataDir(t);
  const { code, stderr } = await failedStart(spawnServer({ DATA_DIR: dataDir, STORAGE_URL: url, ...S3_CREDENTIALS }));
  t.equal(code, 1);
  t.notOk(fs.existsSync(temporaryFolderFor(dataDir)), 'no temporary folder left behind');
  t.match(stderr, `Storage error: the bucket "no-such-bucket" at ${s3.endpoint} (STORAGE_URL) does not exist`);
  t.equal(stderr.trim().split('\n').length, 1, 'one line');
  t.notMatch(stderr, / {4}at /, 'no stack trace');
  t.notMatch(stderr, /S3RVER/, 'no credentials');
});

t.test('start-up: the server names its store in the log, without secrets, and on /ready', async (t) => {
  const s3 = await startS3(t);
  const dataDir = tempDataDir(t);
  const service = await startService({ DATA_DIR: dataDir, GENERATOR: 'builtin', ...s3.env });
  t.teardown(() => {
    service.child.kill('SIGTERM');
    return service.exited;
  });
  const line = service.output().split('\n').find((l) => l.includes('knowledge files are stored'));
  t.ok(line, 'logged');
  t.match(JSON.parse(line!), { msg: `knowledge files are stored in S3 bucket "blog" under blog/ at ${s3.endpoint} (region us-east-1)`, store: { kind: 's3', bucket: 'blog' } });
  t.notMatch(service.output(), /S3RVER/, 'the secret is never logged');
  const ready = await (await fetch(`${service.url}/ready`, { headers: { authorization: `Bearer ${BOOTSTRAP_KEY}` } })).json();
  t.match(ready, { storage: 'ok', store: { kind: 's3', bucket: 'blog', prefix: 'blog', endpoint: s3.endpoint } });
  const form = multipart([{ name: 'file', filename: 'served.md', content: '# Served\nThe real server stores this in the bucket.' }]);
  const res = await fetch(`${service.url}/api/v1/knowledge`, { method: 'POST', body: new Uint8Array(form.payload), headers: { ...form.headers, authorization: `Bearer ${BOOTSTRAP_KEY}` } });
  t.equal(res.status, 201);
  const item = (await res.json()).data.knowledge;
  t.ok(await s3.exists(objectKey(s3, item.s3Key)));
  t.notOk(fs.existsSync(path.join(dataDir, 'storage')));
});

t.test('start-up in process: refused credentials and an unreachable store are one-line errors', async (t) => {
  const s3 = await startS3(t);
  const refused = testConfig(tempDataDir(t), { ...s3.env, AWS_ACCESS_KEY_ID: 'NOT-A-KEY' });
  await t.rejects(startApp(t, refused), new StoreStartError(`Storage error: access to the bucket "blog" at ${s3.endpoint} (STORAGE_URL) was refused: check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`));
  const closed = await closedPortUrl();
  const unreachable = testConfig(tempDataDir(t), { ...S3_CREDENTIALS, STORAGE_URL: `s3://blog?endpoint=${closed}&forcePathStyle=true` });
  await t.rejects(startApp(t, unreachable), { name: 'StoreStartError', message: new RegExp(`^Storage error: cannot reach the bucket "blog" at ${closed} \\(STORAGE_URL\\): .*ECONNREFUSED`) });
});

t.test('the store answers that are not reachable with s3rver: mapped to the right error', async (t) => {
  const dataDir = tempDataDir(t);
  const config = testConfig(dataDir, { STORAGE_URL: 's3://blog?region=eu-west-1', ...S3_CREDENTIALS });
  const store = (await createObjectStore(config)) as S3Storage;
  t.teardown(() => store.close());
  t.type(store, S3Storage);
  t.equal(store.objectKey('site/knowledge/x.pdf'), 'site/knowledge/x.pdf');
  const send = (store as unknown as { client: { send: () => Promise<unknown> } }).client;
  const answer = (status: number | undefined, extra: object = {}) => {
    send.send = async () => {
      throw Object.assign(new Error('UnknownError'), { name: 'Unknown', $metadata: { httpStatusCode: status } }, extra);
    };
  };
  answer(301);
  await t.rejects(store.open(), { message: 'Storage error: the bucket "blog" (STORAGE_URL) is not in region eu-west-1: set region= in STORAGE_URL' });
  answer(500, { name: 'InternalError' });
  await t.rejects(store.open(), { message: 'Storage error: cannot reach the bucket "blog" (STORAGE_URL): it answered 500 InternalError' });
  t.notOk(fs.existsSync(temporaryFolderFor(dataDir)), 'a failed start leaves no temporary folder');
  send.send = async () => ({});
  await store.open();
  answer(503, { message: 'Slow Down\n please' });
  await t.rejects(store.remove('k'), { statusCode: 503, code: 'STORAGE_UNAVAILABLE' });
  await t.rejects(store.exists('k'), { code: 'STORAGE_UNAVAILABLE' });
  t.equal(await store.reachable(), false);
  send.send = async () => ({});
  t.equal(await store.reachable(), false, 'the last probe is trusted for a second');
  answer(404, { name: 'NoSuchBucket' });
  await t.rejects(store.withLocalFile('k', async () => 'unused'), { code: 'STORAGE_UNAVAILABLE' }, 'a bucket gone is the store failing, not a file missing');
  send.send = async () => ({});
  t.equal(await store.reachable(), true, 'a failure makes /ready look again');
  send.send = async () => ({
    Body: new Readable({
      read() {
        this.destroy(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
      },
    }),
  });
  await t.rejects(store.withLocalFile('k', async () => 'unused'), { code: 'STORAGE_UNAVAILABLE' }, 'the connection lost mid-download');
  answer(undefined, { code: 'ENOSPC' });
  await t.rejects(store.withLocalFile('k', async () => 'unused'), { code: 'ENOSPC' }, 'a full local disk stays a full disk');
  t.same(fs.readdirSync(temporaryFolderFor(dataDir)), []);
});

t.test('local disk stays the default, under DATA_DIR/storage', async (t) => {
  const ctx = await buildTestApp(t);
  t.equal(ctx.config.storage.kind, 'local');
  t.type(ctx.app.objectStore, FileStorage);
  t.same(ctx.app.objectStore.description, { kind: 'local', path: path.join(ctx.dataDir, 'storage') });
  const item = (await upload(ctx, 'local.txt', 'Moka pots brew on the stove.')).json().data.knowledge;
  t.ok(fs.existsSync(path.join(ctx.dataDir, 'storage', item.s3Key)));
  t.equal(await ctx.app.objectStore.exists(item.s3Key), true);
  t.equal(await ctx.app.objectStore.exists('nowhere/knowledge/none.txt'), false);
  t.match((await ctx.call({ method: 'GET', url: '/ready' })).json(), { storage: 'ok', store: { kind: 'local', path: path.join(ctx.dataDir, 'storage') } });
  t.equal(describeStore(ctx.app.objectStore.description), `knowledge files are stored on local disk under ${path.join(ctx.dataDir, 'storage')}`);
  await ctx.app.indexer.whenIdle();
});

t.test('STORAGE_URL is parsed, and a bad one is a configuration error naming it without secrets', async (t) => {
  const base = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI' };
  t.same(loadConfig({}).storage, { kind: 'local' });
  t.same(loadConfig({ STORAGE_URL: '  ' }).storage, { kind: 'local' }, 'blank is unset');
  t.same(loadConfig({ ...base, STORAGE_URL: 's3://blog/uploads/v1/?endpoint=http://127.0.0.1:9000/&region=eu-central-1&forcePathStyle=true' }).storage, {
    kind: 's3',
    bucket: 'blog',
    prefix: 'uploads/v1',
    endpoint: 'http://127.0.0.1:9000',
    region: 'eu-central-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI' },
  });
  t.same(loadConfig({ STORAGE_URL: 's3://my.bucket-1', AWS_REGION: 'ap-south-1', AWS_SESSION_TOKEN: 'tok', ...base }).storage, {
    kind: 's3',
    bucket: 'my.bucket-1',
    prefix: '',
    endpoint: null,
    region: 'ap-south-1',
    forcePathStyle: false,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI', sessionToken: 'tok' },
  });
  const defaults = loadConfig({ STORAGE_URL: 's3://blog/my%20files' }).storage;
  t.match(defaults, { region: 'us-east-1', prefix: 'my files', credentials: null }, 'without keys the SDK looks for credentials itself');

  const bad: [string, RegExp][] = [
    ['blog', /not a URL/],
    ['https://blog.s3.amazonaws.com', /only s3:\/\/ URLs/],
    ['s3://', /bucket name/],
    ['s3://Blog', /bucket name/],
    ['s3://ab', /bucket name/],
    ['s3://blog:9000', /port belongs in endpoint/],
    ['s3://blog#x', /fragment/],
    ['s3://blog/a//b', /prefix/],
    ['s3://blog/a%2F%2Fb', /prefix/],
    ['s3://blog/%E0%A4%A', /percent-encoding/],
    ['s3://blog?endpoint=localhost:9000', /endpoint must be an http\(s\) URL/],
    ['s3://blog?endpoint=not%20a%20url', /endpoint must be an http\(s\) URL/],
    ['s3://blog?forcePathStyle=yes', /forcePathStyle must be true or false/],
    ['s3://blog?region=', /region/],
    ['s3://blog?forcepathstyle=true', /unknown parameter forcepathstyle/],
  ];
  for (const [value, reason] of bad) {
    t.throws(() => loadConfig({ STORAGE_URL: value }), { name: 'ConfigError', message: reason }, value);
    t.throws(() => loadConfig({ STORAGE_URL: value }), { message: /^Invalid environment variable STORAGE_URL: .*expected s3:\/\/<bucket>\[\/<prefix>\]\?endpoint=/ }, value);
  }
  const secretEndpoints = ['http://minio:wJalrXUtnFEMI@127.0.0.1:9000', encodeURIComponent('http://minio:wJalrXUtnFEMI@127.0.0.1:9000')];
  for (const value of ['s3://AKIDEXAMPLE:wJalrXUtnFEMI@blog', ...secretEndpoints.map((endpoint) => `s3://blog?endpoint=${endpoint}`)]) {
    const error = (() => {
      try {
        loadConfig({ STORAGE_URL: value });
      } catch (caught) {
        return caught as Error;
      }
    })();
    t.type(error, ConfigError, value);
    t.match(error?.message, /credentials do not belong in/);
    t.notMatch(error?.message, /wJalrXUtnFEMI/, 'the secret is not repeated');
  }
  t.throws(() => loadConfig({ STORAGE_URL: 's3://blog', AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE' }), new ConfigError('AWS_SECRET_ACCESS_KEY', 'is required with AWS_ACCESS_KEY_ID'));
  t.throws(() => loadConfig({ STORAGE_URL: 's3://blog', AWS_SECRET_ACCESS_KEY: 'x' }), new ConfigError('AWS_ACCESS_KEY_ID', 'is required with AWS_SECRET_ACCESS_KEY'));
  t.equal(redactUrl('http://user:secret@host:9000/x'), 'http://user:***@host:9000/x');
  t.equal(redactUrl('http://host:9000/x?a=b@c'), 'http://host:9000/x?a=b@c');
  t.equal(redactUrl('s3://b?endpoint=http%3A%2F%2Fu%3Ap%40h%3A1%2F%E0'), 's3://b?endpoint=http://u:***@h:1/%E0', 'encoded, and not all decodable');
  t.equal(describeStore({ kind: 's3', bucket: 'b', prefix: '', endpoint: null, region: 'us-east-1' }), 'knowledge files are stored in S3 bucket "b" (region us-east-1)');
});

t.test('a failed start-up with STORAGE_URL set names the variable', async (t) => {
  const { code, stderr } = await failedStart(spawnServer({ DATA_DIR: tempDataDir(t), STORAGE_URL: 'ftp://files' }));
  t.equal(code, 1);
  t.match(stderr, /^Configuration error: Invalid environment variable STORAGE_URL: only s3:\/\/ URLs are supported/);
});
