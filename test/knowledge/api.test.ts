import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { formatSize, safeFileName } from '../../src/knowledge/storage.js';
import { toFtsQuery } from '../../src/knowledge/sqlite.js';
import { ISO_MS, UUID_V4, buildTestApp, fixturesDir, waitFor, type TestApp } from '../helpers/app.js';
import { knowledgeRows } from '../helpers/knowledge-rows.js';
import { multipart, type Part } from '../helpers/multipart.js';

const upload = (ctx: TestApp, parts: Part[], key?: string) => {
  const form = multipart(parts);
  return ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers, key });
};
const uploadFile = (ctx: TestApp, filename: string, content: Buffer | string, key?: string) => upload(ctx, [{ name: 'file', filename, content }], key);
const fixture = (relative: string) => fs.readFileSync(path.join(fixturesDir, relative));
const search = async (ctx: TestApp, q: string, extra = '', key?: string) =>
  (await ctx.call({ method: 'GET', url: `/api/v1/knowledge/search?q=${encodeURIComponent(q)}${extra}`, key })).json();

/** Every file under storage/ (temporary ones included), to prove refusals leave nothing. */
function storedFiles(dataDir: string): string[] {
  const root = path.join(dataDir, 'storage');
  return fs.readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath ?? e.path, e.name));
}
const fileRows = (ctx: TestApp) => knowledgeRows(ctx.app).fileCount();

t.test('upload returns the spec shape and stores the file under its s3Key', async (t) => {
  const ctx = await buildTestApp(t);
  const content = fixture('text/coffee-brewing-guide.md');
  const res = await uploadFile(ctx, 'coffee-brewing-guide.md', content);
  t.equal(res.statusCode, 201);
  const body = res.json();
  t.equal(body.success, true);
  t.same(Object.keys(body.data).sort(), ['knowledge', 'message', 'site']);
  t.same(body.data.site, ctx.site);
  const item = body.data.knowledge;
  t.same(Object.keys(item).sort(), ['id', 'lastUpdated', 'name', 's3Key', 'size', 'status', 'type']);
  t.match(item.id, UUID_V4);
  t.equal(item.name, 'coffee-brewing-guide.md');
  t.equal(item.type, 'text/markdown');
  t.equal(item.status, 'uploaded');
  t.equal(item.size, formatSize(content.length));
  t.match(item.size, /^\d+(\.\d)? (B|KB)$/);
  t.match(item.lastUpdated, ISO_MS);
  t.equal(item.s3Key, `${ctx.site.id}/knowledge/${item.id}.md`);
  t.same(fs.readFileSync(path.join(ctx.dataDir, 'storage', item.s3Key)), content, 'stored byte for byte');

  await ctx.app.indexer.whenIdle();
  const got = (await ctx.call({ method: 'GET', url: `/api/v1/knowledge/${item.id}` })).json().data.knowledge;
  t.equal(got.status, 'indexed');
  t.equal(got.error, null);
  t.ok(got.chunkCount >= 1);
  t.equal(got.s3Key, item.s3Key);
});

const EXPECTED: [string, string[]][] = [
  ['word/test03.doc', ['GPL v3.0', 'Apache v2.0']],
  ['word/test03.docx', ['GPL v3.0', 'Apache v2.0']],
  ['word/bigfile-01.doc', ['Welcome to BlogCFC']],
  ['word/bigfile-01.docx', ['Welcome to BlogCFC']],
  ['word/test11.doc', ['parsing the Word file in node']],
  ['pdf/fd_ins_8859.pdf', ['Form 8859', 'District of Columbia']],
  ['text/coffee-brewing-guide.md', ['1:16', '60 grams of coffee per litre']],
  ['text/product-catalog.csv', ['CL-101']],
  ['text/release-notes-2026.txt', []],
  ['word/test01.doc', []],
  ['word/test01.docx', []],
  ['word/test05.doc', []],
  ['word/bad-xml.docx', []],
  ['pdf/i216_nuclear.pdf', []],
  ['pdf/i242_testingWithTable.pdf', []],
  ['pdf/i255_emojis.pdf', []],
  ['pdf/i373_err_broken.pdf', []],
];

t.test('every fixture is uploaded, indexed and found by its phrases', async (t) => {
  const ctx = await buildTestApp(t);
  const ids = new Map<string, string>();
  for (const [file] of EXPECTED) {
    const res = await uploadFile(ctx, path.basename(file), fixture(file));
    t.equal(res.statusCode, 201, file);
    ids.set(file, res.json().data.knowledge.id);
  }
  await ctx.app.indexer.whenIdle();
  for (const [file, phrases] of EXPECTED) {
    const item = (await ctx.call({ method: 'GET', url: `/api/v1/knowledge/${ids.get(file)}` })).json().data.knowledge;
    t.equal(item.status, 'indexed', `${file} indexed ${item.error ?? ''}`);
    for (const phrase of phrases) {
      const found = await search(ctx, phrase, `&fileIds=${ids.get(file)}`);
      const text = found.data.results.map((r: { text: string }) => r.text).join('\n');
      t.ok(text.includes(phrase), `${file}: "${phrase}"`);
      t.equal(found.data.results[0]?.fileName, path.basename(file));
    }
  }
  const csv = await search(ctx, 'CL-101', `&fileIds=${ids.get('text/product-catalog.csv')}`);
  t.match(csv.data.results[0].text, /CL-101/);
  t.match(csv.data.results[0].text, /\w+: [^\n]*,[^\n]*/, 'the quoted name with its comma survives as a column: value line');

  const all = await search(ctx, 'District of Columbia');
  t.equal(all.data.results[0].fileName, 'fd_ins_8859.pdf', 'best passage first across the site');
  t.same(Object.keys(all.data.results[0]).sort(), ['fileId', 'fileName', 'score', 'text']);
  t.ok(all.data.results[0].score > 0);
  const control = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
  const chunks = await knowledgeRows(ctx.app).chunkTexts();
  t.ok(chunks.length > 20);
  t.notOk(chunks.some((text) => control.test(text)), 'no control characters reach the index');
});

t.test('unreadable files end failed with a readable error, across the extractor process', async (t) => {
  const ctx = await buildTestApp(t, {}, { realExtractor: true });
  for (const [file, reason] of [
    ['word/badfile-01-bad-header.doc', /corrupt|not a Word|could not be read|unreadable/i],
    ['pdf/i43_err_encrypted.pdf', /password|encrypted/i],
  ] as const) {
    const res = await uploadFile(ctx, path.basename(file), fixture(file));
    if (res.statusCode === 415) {
      t.equal(res.json().error.code, 'UNSUPPORTED_FILE_TYPE', `${file} refused at upload: its content is not the type it claims`);
      continue;
    }
    t.equal(res.statusCode, 201, file);
    await ctx.app.indexer.whenIdle();
    const item = (await ctx.call({ method: 'GET', url: `/api/v1/knowledge/${res.json().data.knowledge.id}` })).json().data.knowledge;
    t.equal(item.status, 'failed', file);
    t.match(item.error, reason, file);
    t.equal(item.chunkCount, 0);
  }
});

t.test('size limit: exactly 10 MiB is accepted, one byte more is 413', async (t) => {
  const ctx = await buildTestApp(t);
  const line = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit sed do.\n';
  const tenMiB = Buffer.alloc(10 * 1024 * 1024, line);
  const ok = await uploadFile(ctx, 'big.txt', tenMiB);
  t.equal(ok.statusCode, 201);
  t.equal(ok.json().data.knowledge.size, '10.0 MB');
  const tooBig = await uploadFile(ctx, 'bigger.txt', Buffer.concat([tenMiB, Buffer.from('x')]));
  t.equal(tooBig.statusCode, 413);
  t.equal(tooBig.json().error.code, 'FILE_TOO_LARGE');
  t.equal(await fileRows(ctx), 1);
  t.equal(storedFiles(ctx.dataDir).length, 1, 'nothing of the refused upload is left');
  await ctx.app.indexer.whenIdle();
});

t.test('wrong, disguised and missing files are refused, leaving nothing behind', async (t) => {
  const ctx = await buildTestApp(t);
  const cases: [string, Part[], number, string, RegExp?][] = [
    ['text named .pdf', [{ name: 'file', filename: 'report.pdf', content: 'just text' }], 415, 'UNSUPPORTED_FILE_TYPE', /\.txt .md .pdf .doc .docx .csv/],
    ['an .exe', [{ name: 'file', filename: 'setup.exe', content: Buffer.from([0x4d, 0x5a, 0x90, 0]) }], 415, 'UNSUPPORTED_FILE_TYPE', /Accepted file types/],
    ['no extension', [{ name: 'file', filename: 'README', content: 'text' }], 415, 'UNSUPPORTED_FILE_TYPE'],
    ['pdf named .docx', [{ name: 'file', filename: 'x.docx', content: fixture('pdf/fd_ins_8859.pdf') }], 415, 'UNSUPPORTED_FILE_TYPE'],
    ['binary named .txt', [{ name: 'file', filename: 'x.txt', content: Buffer.from([0x61, 0, 0x62]) }], 415, 'UNSUPPORTED_FILE_TYPE'],
    ['empty file', [{ name: 'file', filename: 'empty.txt', content: '' }], 400, 'VALIDATION_ERROR'],
    ['no file part', [{ name: 'note', content: 'hello' }], 400, 'VALIDATION_ERROR'],
    ['file under another name', [{ name: 'document', filename: 'a.txt', content: 'hello' }], 400, 'VALIDATION_ERROR'],
    ['two files', [{ name: 'file', filename: 'a.txt', content: 'first' }, { name: 'file', filename: 'b.txt', content: 'second' }], 400, 'VALIDATION_ERROR'],
  ];
  for (const [name, parts, status, code, message] of cases) {
    const res = await upload(ctx, parts);
    t.equal(res.statusCode, status, name);
    t.equal(res.json().error?.code, code, name);
    if (message) t.match(res.json().error.message, message, name);
  }
  const notMultipart = await ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: { file: 'x' } });
  t.equal(notMultipart.statusCode, 415);
  for (const [contentType, payload] of [
    ['multipart/form-data', 'x'],
    ['multipart/form-data; boundary=zz', 'garbage'],
    ['multipart/form-data; boundary=zz', '--zz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nunterminated'],
  ]) {
    const res = await ctx.call({ method: 'POST', url: '/api/v1/knowledge', headers: { 'content-type': contentType }, payload });
    t.equal(res.statusCode, 400, `malformed multipart: ${JSON.stringify(payload)}`);
    t.equal(res.json().success, false);
  }
  t.equal(await fileRows(ctx), 0);
  t.same(storedFiles(ctx.dataDir), []);
});

t.test('file names are reduced to a safe base name', async (t) => {
  const ctx = await buildTestApp(t);
  const res = await uploadFile(ctx, '../../etc/pass\u0007wd.txt', 'not really a password file');
  t.equal(res.statusCode, 201);
  const item = res.json().data.knowledge;
  t.equal(item.name, 'passwd.txt');
  t.equal(item.s3Key, `${ctx.site.id}/knowledge/${item.id}.txt`);
  t.ok(fs.existsSync(path.join(ctx.dataDir, 'storage', item.s3Key)));
  t.equal(safeFileName('C:\\Users\\me\\notes.md', 'md'), 'notes.md');
  t.equal(safeFileName('...', 'txt'), 'file.txt');
  t.equal(safeFileName(`${'a'.repeat(300)}.pdf`, 'pdf').length, 200);
  t.match(safeFileName(`${'a'.repeat(300)}.pdf`, 'pdf'), /\.pdf$/);
  await ctx.app.indexer.whenIdle();
});

t.test('delete removes the row, its index and the stored file', async (t) => {
  const ctx = await buildTestApp(t);
  const item = (await uploadFile(ctx, 'notes.txt', 'Grinding coffee right before brewing keeps its aroma.')).json().data.knowledge;
  await ctx.app.indexer.whenIdle();
  const [only] = (await search(ctx, 'aroma')).data.results;
  t.ok(only.score > 0, 'a lone file still scores above zero');
  const stored = path.join(ctx.dataDir, 'storage', item.s3Key);
  t.ok(fs.existsSync(stored));
  const res = await ctx.call({ method: 'DELETE', url: `/api/v1/knowledge/${item.id}` });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { success: true, data: { message: 'Knowledge item deleted successfully', knowledgeId: item.id, site: ctx.site } });
  t.notOk(fs.existsSync(stored), 'file removed from disk');
  t.equal((await search(ctx, 'aroma')).data.results.length, 0, 'and from the index');
  t.same(await knowledgeRows(ctx.app).chunkTexts(), []);
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/knowledge/${item.id}` })).statusCode, 404, 'second delete');
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/knowledge/${item.id}` })).statusCode, 404);
});

t.test('sites are isolated for list, get, search and delete', async (t) => {
  const ctx = await buildTestApp(t);
  const other = await ctx.addSite('Other');
  const mine = (await uploadFile(ctx, 'mine.txt', 'Saffron risotto needs patience and warm stock.')).json().data.knowledge;
  await uploadFile(ctx, 'theirs.txt', 'Saffron harvest happens in autumn.', other.key);
  await ctx.app.indexer.whenIdle();
  const list = (await ctx.call({ method: 'GET', url: '/api/v1/knowledge', key: other.key })).json().data;
  t.equal(list.pagination.total, 1);
  t.equal(list.items[0].name, 'theirs.txt');
  t.same(Object.keys(list.items[0]).sort(), ['chunkCount', 'createdAt', 'error', 'id', 'lastUpdated', 'name', 's3Key', 'size', 'status', 'type']);
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/knowledge/${mine.id}`, key: other.key })).statusCode, 404);
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/knowledge/${mine.id}`, key: other.key })).statusCode, 404);
  const theirs = await search(ctx, 'saffron', '', other.key);
  t.same(theirs.data.results.map((r: { fileName: string }) => r.fileName), ['theirs.txt']);
  const filtered = await search(ctx, 'saffron', `&fileIds=${mine.id}`, other.key);
  t.equal(filtered.error.code, 'VALIDATION_ERROR', "another site's file id is unknown here, as in a batch");
  t.same(filtered.error.details, [{ path: '/querystring/fileIds', message: `unknown file id ${mine.id}` }]);
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/knowledge/${mine.id}` })).json().data.knowledge.name, 'mine.txt');
  const page = (await ctx.call({ method: 'GET', url: '/api/v1/knowledge?page=2&limit=1' })).json().data;
  t.same(page.items, []);
  t.same(page.pagination, { page: 2, limit: 1, total: 1, pages: 1 });
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/knowledge?limit=101' })).statusCode, 400);
});

t.test('any query text is a plain query, never FTS5 syntax', async (t) => {
  const ctx = await buildTestApp(t);
  await uploadFile(ctx, 'syntax.txt', 'Coffee AND tea: a NEAR comparison of brewing with "quotes" and star* marks.');
  await ctx.app.indexer.whenIdle();
  for (const q of ['"', '""', '*', 'NEAR(', 'NEAR(coffee tea', 'AND', 'coffee AND', 'OR tea', 'NOT', '-coffee', 'text:coffee', '^coffee', 'coffee)', '(', '{x}', "'; drop table posts; --", 'star*', '\u0000']) {
    const res = await ctx.call({ method: 'GET', url: `/api/v1/knowledge/search?q=${encodeURIComponent(q)}` });
    t.equal(res.statusCode, 200, JSON.stringify(q));
  }
  t.equal((await search(ctx, '"quotes"')).data.results.length, 1);
  t.equal((await search(ctx, 'NEAR(coffee')).data.results.length, 1);
  t.equal((await search(ctx, 'coffee', '&fileIds=,,')).data.results.length, 1, 'an empty fileIds list is no filter');
  t.equal(toFtsQuery('coffee AND "tea" -milk*'), '"coffee" OR "tea" OR "milk"');
  t.equal(toFtsQuery('How to brew Coffee for the beginners'), '"brew" OR "coffee" OR "beginners"', 'stopwords dropped');
  t.equal(toFtsQuery('to be or not to be'), '"to" OR "be" OR "or" OR "not"', 'kept when nothing else is left');
  t.equal(toFtsQuery('*** ()'), null);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/knowledge/search' })).statusCode, 400, 'q is required');
});

t.test('files left unindexed by a crash are indexed on the next start', async (t) => {
  const ctx = await buildTestApp(t);
  const item = (await uploadFile(ctx, 'resume.txt', 'Cardamom coffee is popular in the Middle East.')).json().data.knowledge;
  await ctx.app.indexer.whenIdle();
  // Put the file back where a crash mid-indexing would have left it: uploaded, half its chunks written.
  await knowledgeRows(ctx.app).markUploaded(item.id);
  t.equal((await search(ctx, 'cardamom')).data.results.length, 0, 'a file not yet indexed is not searched');
  t.equal(await ctx.app.indexer.resumePending(), 1);
  await ctx.app.indexer.whenIdle();
  const got = (await ctx.call({ method: 'GET', url: `/api/v1/knowledge/${item.id}` })).json().data.knowledge;
  t.equal(got.status, 'indexed');
  t.equal((await search(ctx, 'cardamom')).data.results.length, 1, 'indexed once, not twice');
});

t.test('an upload aborted mid-stream leaves nothing behind', async (t) => {
  const ctx = await buildTestApp(t);
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as net.AddressInfo;
  const boundary = '----aborted';
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="partial.txt"\r\nContent-Type: text/plain\r\n\r\n` + 'x'.repeat(256 * 1024);
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(
    `POST /api/v1/knowledge HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${ctx.key}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${head.length + 1_000_000}\r\n\r\n`,
  );
  socket.write(head);
  // Wait until the server has started writing the temporary file, then drop the connection.
  await waitFor(() => storedFiles(ctx.dataDir).length > 0, 'the upload to reach the disk');
  socket.destroy();
  await waitFor(() => storedFiles(ctx.dataDir).length === 0, 'the partial file to be removed');
  t.equal(await fileRows(ctx), 0);
  const after = await uploadFile(ctx, 'whole.txt', 'The service still takes uploads.');
  t.equal(after.statusCode, 201);
  await ctx.app.indexer.whenIdle();
});
