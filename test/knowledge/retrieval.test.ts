import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { queryTerms } from '../../src/knowledge/search.js';
import { toFtsQuery } from '../../src/knowledge/sqlite.js';
import { separateWords } from '../../src/text/cjk.js';
import { SQLITE_ONLY, buildTestApp, fixturesDir, projectRoot, type TestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

const fixture = (relative: string) => fs.readFileSync(path.join(fixturesDir, relative));

async function upload(ctx: TestApp, filename: string, content: Buffer | string): Promise<string> {
  const form = multipart([{ name: 'file', filename, content }]);
  const res = await ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers });
  t.equal(res.statusCode, 201, `upload ${filename}`);
  return res.json().data.knowledge.id;
}

const search = async (ctx: TestApp, q: string) =>
  (await ctx.call({ method: 'GET', url: `/api/v1/knowledge/search?q=${encodeURIComponent(q)}&limit=10` })).json().data.results as {
    fileName: string;
    text: string;
  }[];

t.test('a token with inner punctuation is a phrase; brackets and operators are not joiners', async (t) => {
  t.equal(toFtsQuery('1:16'), '"1 16"');
  t.equal(toFtsQuery('CL-101'), '"cl 101"');
  t.equal(toFtsQuery('v2.3 release'), '"v2 3" OR "release"');
  t.equal(toFtsQuery('meet at 10:30'), '"meet" OR "10 30"');
  t.equal(toFtsQuery('pour-over brewing'), '"pour over" OR "brewing"');
  t.equal(toFtsQuery('1,000 grams, coffee'), '"1 000" OR "grams" OR "coffee"', 'a comma joins digits only');
  t.equal(toFtsQuery("a beginner's guide"), '"beginner" OR "guide"', 'a possessive is the word itself');
  t.equal(toFtsQuery('NEAR(coffee'), '"near" OR "coffee"');
  t.equal(toFtsQuery('"coffee" AND tea*'), '"coffee" OR "tea"');
  t.equal(toFtsQuery('x" OR "1'), '"x" OR "1"', 'quotes never reach the query');
});

t.test('Chinese and Japanese queries are segmented as the index is', async (t) => {
  t.equal(toFtsQuery('原子力発電所'), '"原子力 発電 所"');
  t.equal(toFtsQuery('原子力発電所の現状'), '"原子力 発電 所" OR "現状"', 'a long run is split at its particles');
  t.equal(toFtsQuery('解析Word文档'), '"解析 word 文 档"');
  t.same(queryTerms('福島第一原子力発電所 再稼働'), [['福島', '第一', '原子力', '発電', '所'], ['再', '稼働']]);
  // The chunker and the query agree on the words of a compound, whatever surrounds it.
  const indexed = separateWords('東京電力の福島第一原子力発電所は日本の発電所です', ' ');
  t.ok(` ${indexed} `.includes(` ${queryTerms('原子力発電所')[0]!.join(' ')} `), indexed);
});

t.test('1:16 and CL-101 rank their only document first, among documents holding 1 and 16 apart', async (t) => {
  const ctx = await buildTestApp(t);
  await upload(ctx, 'coffee-brewing-guide.md', fixture('text/coffee-brewing-guide.md'));
  await upload(ctx, 'product-catalog.csv', fixture('text/product-catalog.csv'));
  await upload(ctx, 'release-notes-2026.txt', fixture('text/release-notes-2026.txt'));
  // Documents full of the separate numbers, which a query of "1" OR "16" ranks higher.
  for (let i = 0; i < 3; i++) {
    await upload(ctx, `numbers-${i}.txt`, Array.from({ length: 20 }, (_, k) => `Step 1 of 16: row ${k} holds 16 items and 1 spare.`).join('\n'));
  }
  await upload(ctx, 'codes.txt', 'The CL class meets in room 101; CL students bring 101 forms.');
  await ctx.app.indexer.whenIdle();

  const ratio = await search(ctx, '1:16');
  t.equal(ratio.length, 1, 'only the document with the ratio matches');
  t.equal(ratio[0]!.fileName, 'coffee-brewing-guide.md');
  t.match(ratio[0]!.text, /1:16/);
  t.equal((await search(ctx, 'CL-101'))[0]!.fileName, 'product-catalog.csv');
  t.equal((await search(ctx, 'Version 4.3'))[0]!.fileName, 'release-notes-2026.txt');
  t.equal((await search(ctx, 'ratio 1:15 for a stronger cup'))[0]!.fileName, 'coffee-brewing-guide.md');
});

t.test('a Japanese compound inside a longer one ranks its document first; Chinese too', async (t) => {
  const ctx = await buildTestApp(t);
  await upload(ctx, 'i216_nuclear.pdf', fixture('pdf/i216_nuclear.pdf'));
  await upload(ctx, 'test11.doc', fixture('word/test11.doc'));
  await upload(ctx, 'coffee-brewing-guide.md', fixture('text/coffee-brewing-guide.md'));
  await upload(ctx, 'japanese-notes.txt', '発電の歴史について。原子の構造と力の関係。所長の話。');
  await ctx.app.indexer.whenIdle();

  for (const q of ['原子力発電所', '福島第一原子力発電所', '柏崎刈羽', '再稼働', '原子力発電所の現状']) {
    const results = await search(ctx, q);
    t.equal(results[0]?.fileName, 'i216_nuclear.pdf', `${q} finds the nuclear plant list first`);
  }
  const [nuclear] = await search(ctx, '原子力発電所');
  t.match(nuclear!.text, /福島第一原子力発電所/, 'the passage reads as written');
  t.notMatch(nuclear!.text, /\u200B/, 'no word separator reaches a reader');
  t.equal((await search(ctx, '测试'))[0]?.fileName, 'test11.doc');
  t.equal((await search(ctx, '解析Word文档'))[0]?.fileName, 'test11.doc');
  t.same(await search(ctx, '原子力発電所の安全性'), (await search(ctx, '原子力発電所 安全性')).slice(0, 10), 'particles split a query like spaces');
});

t.test('migration 0009 sends files indexed without word separators back to the indexer', { skip: SQLITE_ONLY }, async (t) => {
  const ctx = await buildTestApp(t);
  const nuclear = await upload(ctx, 'nuclear.txt', '東京電力の福島第一原子力発電所は日本の発電所です。');
  const english = await upload(ctx, 'english.txt', 'Plain English text needs no segmentation.');
  await ctx.app.indexer.whenIdle();
  t.equal((await search(ctx, '原子力発電所')).length, 1);

  // The index as the previous release wrote it: no separators in the Japanese chunk.
  ctx.sqlite.prepare("update knowledge_chunks set text = replace(text, char(8203), '') where file_id = ?").run(nuclear);
  t.equal((await search(ctx, '原子力発電所')).length, 0, 'a compound inside a run is not found in an old index');

  const migration = fs.readFileSync(path.join(projectRoot, 'drizzle/0009_reindex_cjk_text.sql'), 'utf8');
  ctx.sqlite.exec(migration);
  const status = (id: string) => (ctx.sqlite.prepare('select status from knowledge_files where id = ?').get(id) as { status: string }).status;
  t.equal(status(nuclear), 'uploaded', 'the Japanese file is indexed again at the next start');
  t.equal(status(english), 'indexed', 'other files are left alone');

  t.equal(await ctx.app.indexer.resumePending(), 1);
  await ctx.app.indexer.whenIdle();
  t.equal(status(nuclear), 'indexed');
  t.equal((await search(ctx, '原子力発電所'))[0]?.fileName, 'nuclear.txt');
  ctx.sqlite.exec(migration);
  t.equal(status(nuclear), 'indexed', 'a file indexed with separators is not sent back again');
});
