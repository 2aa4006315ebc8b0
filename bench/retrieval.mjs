// npm run bench:retrieval: does knowledge search find the passage that answers a question?
//
// Every readable fixture of test/fixtures is uploaded to a fresh site (extracted and chunked in
// this process, as the tests do), then each query of retrieval-set.mjs is searched and its results
// are checked against the passage(s) that answer it, written from reading the documents: a
// result is relevant when it comes from one of the answer's files and contains the answer's words.
//
// Two indexes are compared:
//   before  the retrieval of the previous release: chunks as written, without word separators in
//           Chinese and Japanese text, and every letter/digit run of the query OR-ed as a word
//           (`1:16` -> "1" OR "16"), as src/knowledge/search.ts did;
//   after   the current chunker and searchKnowledge (phrases for tokens with inner punctuation,
//           Intl.Segmenter words for Chinese and Japanese, on the index and on the query).
// Both run the same SQL (FTS5 BM25 over the external-content table) on the same files.
//
// Reported: recall@5 (share of queries with a relevant passage in the first five results) and
// MRR@10 (mean of 1/rank of the first relevant result within ten, 0 when none), overall and per
// kind of query, and a line per query. Target: recall@5 >= 0.9.

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { FIXTURES_DIR, buildApp, dist, makeApiKey, multipartFile, printResult, printTable, round, runBench, tempDir, verdict } from './lib.mjs';
import { FILES, QUERIES, RECALL_AT, TOP, firstRelevant, retrievalFigures } from './retrieval-set.mjs';

/** The query builder of the previous release (src/knowledge/search.ts before phrases and CJK words). */
const STOPWORDS = (await dist('src/text/stopwords.js')).STOPWORDS;
function previousFtsQuery(text) {
  const words = [...new Set((text.normalize('NFKC').match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => w.toLowerCase()))];
  const meaningful = words.filter((w) => !STOPWORDS.has(w));
  const unique = (meaningful.length ? meaningful : words).slice(0, 32);
  return unique.length ? unique.map((w) => `"${w}"`).join(' OR ') : null;
}

/** The SQL of SQLite's search (src/knowledge/sqlite.ts), with the MATCH expression given. */
function searchWith(sqlite, siteId, match) {
  if (!match) return [];
  return sqlite
    .prepare(
      `select k.name as fileName, f.text as text, bm25(knowledge_fts) as rank
         from knowledge_fts f join knowledge_files k on k.id = f.file_id
        where knowledge_fts match ? and f.site_id = ? and k.status = 'indexed'
        order by rank limit ?`,
    )
    .all(match, siteId, TOP)
    .map((row) => ({ fileName: row.fileName, text: row.text.replace(/^\[[^\n]*\]\n/, '') }));
}

async function indexFixtures(label, transformChunks) {
  const { extractChunks } = await dist('src/knowledge/extract.js');
  const apiKey = makeApiKey();
  const dataDir = tempDir(`blog-bench-retrieval-${label}-`);
  const chunkSource = async (filePath, ext, fileName) => transformChunks(await extractChunks(filePath, ext, fileName));
  const { app, close } = await buildApp(dataDir, { env: { BOOTSTRAP_API_KEY: apiKey }, chunkSource });
  const siteId = app.sites.authenticate(apiKey).site.id;
  for (const file of FILES) {
    const form = multipartFile(path.basename(file), fs.readFileSync(path.join(FIXTURES_DIR, file)));
    const res = await app.inject({ method: 'POST', url: '/api/v1/knowledge', payload: form.body, headers: { authorization: `Bearer ${apiKey}`, 'content-type': form.contentType } });
    if (res.statusCode !== 201) throw new Error(`upload of ${file}: ${res.statusCode} ${res.body}`);
  }
  await app.indexer.whenIdle();
  const sqlite = new Database(path.join(dataDir, 'blog.db'), { readonly: true });
  const failed = sqlite.prepare("select name, error from knowledge_files where status <> 'indexed'").all();
  const chunks = sqlite.prepare('select count(*) as n from knowledge_chunks').get().n;
  console.log(`${label}: ${FILES.length} files, ${chunks} chunks${failed.length ? `; not indexed: ${failed.map((f) => f.name).join(', ')}` : ''}`);
  return { app, sqlite, siteId, close: async () => { sqlite.close(); await close(); } };
}

function score(ranks) {
  const { queries, recallAt5, mrrAt10 } = retrievalFigures(ranks);
  return { queries, recallAt5: round(recallAt5, 3), mrrAt10: round(mrrAt10, 3) };
}

await runBench('bench/retrieval', async () => {
  const { withoutWordSeparators } = await dist('src/text/cjk.js');

  const before = await indexFixtures('before', (chunks) => chunks.map(withoutWordSeparators));
  const after = await indexFixtures('after', (chunks) => chunks);

  const rows = [];
  for (const { kind, q, answers } of QUERIES) {
    const old = searchWith(before.sqlite, before.siteId, previousFtsQuery(q));
    const now = await after.app.stores.knowledge.search.search(after.siteId, q, { limit: TOP });
    const [rankBefore, rankAfter] = [firstRelevant(old, answers), firstRelevant(now, answers)];
    rows.push({ kind, query: q, before: rankBefore ?? '-', after: rankAfter ?? '-', top: now[0] ? `${now[0].fileName}` : '(none)', rankBefore, rankAfter });
  }
  printTable(`rank of the first relevant passage (of ${TOP}; '-' = not found)`, rows, ['kind', 'query', 'before', 'after', 'top']);

  const summary = [];
  for (const kind of ['all', ...new Set(QUERIES.map((query) => query.kind))]) {
    const subset = rows.filter((row) => kind === 'all' || row.kind === kind);
    const b = score(subset.map((row) => row.rankBefore));
    const n = score(subset.map((row) => row.rankAfter));
    summary.push({ kind, queries: subset.length, 'recall@5 before': b.recallAt5, 'recall@5 after': n.recallAt5, 'MRR@10 before': b.mrrAt10, 'MRR@10 after': n.mrrAt10 });
  }
  printTable('retrieval quality', summary);
  const overall = summary[0];
  printTable('target', [{ measure: 'recall@5 after', value: overall['recall@5 after'], target: '>= 0.9', verdict: verdict(overall['recall@5 after'] >= 0.9) }]);
  printResult('retrieval', { queries: QUERIES.length, summary, misses: rows.filter((row) => !(row.rankAfter <= RECALL_AT)).map((row) => row.query) });

  await before.close();
  await after.close();
}, { timeLimitMs: 170_000 });
