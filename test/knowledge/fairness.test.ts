/**
 * One tenant must not starve the others in the indexing queue: sites take turns, and a small
 * file does not wait behind a large one while a second lane is free.
 */
import t, { type Test } from 'tap';
import type { ChunkSource } from '../../src/knowledge/indexer.js';
import { extractChunks } from '../../src/knowledge/extract.js';
import { BOOTSTRAP_KEY, startApp, tempDataDir, testConfig, waitFor } from '../helpers/app.js';
import { createSiteWithKey } from '../helpers/sites.js';
import { multipart } from '../helpers/multipart.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function setup(t: Test, source: ChunkSource, concurrency: number, smallFileBytes = 64 * 1024) {
  const app = await startApp(t, testConfig(tempDataDir(t)), { chunkSource: source, indexer: { concurrency, smallFileBytes }, jobs: { autoStart: false } });
  const other = createSiteWithKey(app.database.db, 'Site B');
  const upload = async (name: string, bytes: number, key = BOOTSTRAP_KEY) => {
    const form = multipart([{ name: 'file', filename: name, content: `${name} `.repeat(Math.ceil(bytes / (name.length + 1))) }]);
    const res = await app.inject({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: { ...form.headers, authorization: `Bearer ${key}` } });
    t.equal(res.statusCode, 201, `${name} uploaded`);
    return res.json().data.knowledge.id as string;
  };
  const status = async (id: string, key: string) =>
    (await app.inject({ method: 'GET', url: `/api/v1/knowledge/${id}`, headers: { authorization: `Bearer ${key}` } })).json().data.knowledge.status;
  return { app, upload, status, keyB: other.key };
}

t.test("a small file of site B is indexed while site A's slow files take every lane", async (t) => {
  const source: ChunkSource = async (filePath, ext, fileName, options) => {
    if (fileName.startsWith('slow')) await sleep(1500); // a slow PDF, say: slow at any size
    return extractChunks(filePath, ext, fileName, options);
  };
  const { app, upload, status, keyB } = await setup(t, source, 2);
  await upload('slow-1.md', 300_000);
  await upload('slow-2.md', 300_000);
  await upload('slow-3.md', 300_000);
  const started = Date.now();
  const small = await upload('small.txt', 1000, keyB);
  await waitFor(async () => (await status(small, keyB)) === 'indexed', "site B's small file to be indexed");
  const waited = Date.now() - started;
  t.ok(waited < 1200, `indexed after ${waited} ms, not after the 1.5-4.5 s of site A's files`);
  await app.indexer.whenIdle();
});

t.test('sites take turns in the queue (round robin), each in its own upload order', async (t) => {
  const order: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const source: ChunkSource = async (filePath, ext, fileName, options) => {
    order.push(fileName);
    await gate;
    return extractChunks(filePath, ext, fileName, options);
  };
  // One lane and no lane for small files: the order is the queue's alone.
  const { app, upload, keyB } = await setup(t, source, 1, 0);
  await upload('a1.txt', 500);
  await upload('a2.txt', 500);
  await upload('a3.txt', 500);
  await upload('b1.txt', 500, keyB);
  await upload('b2.txt', 500, keyB);
  release();
  await app.indexer.whenIdle();
  t.same(order, ['a1.txt', 'b1.txt', 'a2.txt', 'b2.txt', 'a3.txt']);
});

t.test('with two lanes, a site with nothing in progress goes before a second file of a busy site', async (t) => {
  const order: string[] = [];
  const gates = new Map<string, () => void>();
  const source: ChunkSource = async (filePath, ext, fileName, options) => {
    order.push(fileName);
    await new Promise<void>((resolve) => gates.set(fileName, resolve));
    return extractChunks(filePath, ext, fileName, options);
  };
  const { app, upload, keyB } = await setup(t, source, 2, 0);
  await upload('a1.txt', 500);
  await upload('a2.txt', 500);
  await upload('a3.txt', 500);
  await upload('b1.txt', 500, keyB);
  t.same(order, ['a1.txt', 'a2.txt'], "alone, site A takes both lanes");
  gates.get('a1.txt')!();
  await waitFor(() => order.length === 3, 'the next file to start');
  t.equal(order[2], 'b1.txt', 'the freed lane goes to site B, which has nothing in progress');
  for (const name of ['a2.txt', 'b1.txt']) gates.get(name)!();
  await waitFor(() => order.length === 4, 'the last file to start');
  gates.get('a3.txt')!();
  await app.indexer.whenIdle();
});
