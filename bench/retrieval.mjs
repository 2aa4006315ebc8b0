// npm run bench:retrieval: does knowledge search find the passage that answers a question?
//
// Every readable fixture of test/fixtures is uploaded to a fresh site (extracted and chunked in
// this process, as the tests do), then each query below is searched and its results are checked
// against the passage(s) that answer it, written from reading the documents: a result is
// relevant when it comes from one of the answer's files and contains the answer's words.
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

const FILES = [
  'text/coffee-brewing-guide.md', 'text/release-notes-2026.txt', 'text/product-catalog.csv',
  'word/test01.doc', 'word/test01.docx', 'word/test03.doc', 'word/test03.docx', 'word/test05.doc', 'word/test11.doc',
  'word/bigfile-01.doc', 'word/bigfile-01.docx', 'word/bad-xml.docx',
  'pdf/fd_ins_8859.pdf', 'pdf/i216_nuclear.pdf', 'pdf/i242_testingWithTable.pdf', 'pdf/i255_emojis.pdf', 'pdf/i373_err_broken.pdf',
];

const COFFEE = ['coffee-brewing-guide.md'];
const NOTES = ['release-notes-2026.txt'];
const CATALOG = ['product-catalog.csv'];
const LICENCES = ['test03.doc', 'test03.docx'];
const MANUAL = ['bigfile-01.doc', 'bigfile-01.docx'];
const FORM = ['fd_ins_8859.pdf'];
const NUCLEAR = ['i216_nuclear.pdf'];
const CHINESE = ['test11.doc'];
const REVIEWING = ['test01.doc', 'test01.docx', 'bad-xml.docx'];

const a = (files, contains) => ({ files, contains });

/** Queries and the passages that answer them (any one of `answers` is a relevant result). */
const QUERIES = [
  // numbers, codes and versions: tokens with inner punctuation
  { kind: 'code', q: '1:16', answers: [a(COFFEE, '1:16')] },
  { kind: 'code', q: 'ratio 1:15 stronger cup', answers: [a(COFFEE, '1:15')] },
  { kind: 'code', q: 'CL-101', answers: [a(CATALOG, 'CL-101')] },
  { kind: 'code', q: 'TB-002', answers: [a(CATALOG, 'TB-002')] },
  { kind: 'code', q: 'Version 4.3', answers: [a(NOTES, 'Version 4.3')] },
  { kind: 'code', q: 'SAML 2.0', answers: [a(NOTES, 'SAML 2.0')] },
  { kind: 'code', q: 'GPL v3.0', answers: [a(LICENCES, 'GPL v3.0')] },
  { kind: 'code', q: 'MySQL 4.1x', answers: [a(MANUAL, '4.1x release is supported')] },
  { kind: 'code', q: 'ColdFusion MX 6.1', answers: [a(MANUAL, 'ColdFusion MX 6.1')] },
  { kind: 'code', q: 'blog.ini.cfm dsn', answers: [a(MANUAL, 'Set the dsn value')] },
  { kind: 'code', q: 'CP-011', answers: [a(CATALOG, 'CP-011')] },
  { kind: 'code', q: 'RSS 1.0', answers: [a(MANUAL, 'RSS 1.0')] },
  { kind: 'code', q: 'offset=-1', answers: [a(MANUAL, 'offset=-1')] },
  { kind: 'code', q: '1.9 kg', answers: [a(CATALOG, '1.9 kg')] },
  { kind: 'code', q: 'Form 1040NR, line 44', answers: [a(FORM, 'line 44')] },
  { kind: 'code', q: '?reinit=1', answers: [a(MANUAL, 'reinit=1')] },
  { kind: 'code', q: 'SW3 4RP', answers: [a(['i373_err_broken.pdf'], 'SW3 4RP')] },
  { kind: 'code', q: 'Word 97-SR2', answers: [a(['test05.doc'], 'Word 97-SR2')] },
  // keywords and questions in plain words
  { kind: 'words', q: 'water temperature for brewing', answers: [a(COFFEE, '90 and 96 degrees')] },
  { kind: 'words', q: 'grind for a French press', answers: [a(COFFEE, 'French press needs a coarse grind')] },
  { kind: 'words', q: 'how long do roasted beans stay fresh', answers: [a(COFFEE, 'two to four weeks')] },
  { kind: 'words', q: '60 grams of coffee per litre', answers: [a(COFFEE, '60 grams of coffee per litre')] },
  { kind: 'words', q: 'scheduled reports in Slack', answers: [a(NOTES, 'Slack')] },
  { kind: 'words', q: 'export to Parquet', answers: [a(NOTES, 'Parquet')] },
  { kind: 'words', q: 'deprecated v1 events endpoint', answers: [a(NOTES, 'v1 events endpoint')] },
  { kind: 'words', q: 'merino wool base layer', answers: [a(CATALOG, 'Merino')] },
  { kind: 'words', q: 'two-person tent', answers: [a(CATALOG, 'Nimbus 2 Tent')] },
  { kind: 'words', q: 'stove that boils a litre of water', answers: [a(CATALOG, 'Ember Stove')] },
  { kind: 'words', q: 'District of Columbia homebuyer credit', answers: [a(FORM, 'District of Columbia')] },
  { kind: 'words', q: 'tax liability limit worksheet', answers: [a(FORM, 'Tax Liability Limit Worksheet')] },
  { kind: 'words', q: 'unused credit carried forward', answers: [a(FORM, 'unused credit')] },
  { kind: 'words', q: 'LGPL derivative works', answers: [a(LICENCES, 'LGPL')] },
  { kind: 'words', q: 'permissive BSD license attribution', answers: [a(LICENCES, 'BSD license')] },
  { kind: 'words', q: 'Apache license', answers: [a(LICENCES, 'Apache v2.0'), a(MANUAL, 'Apache License')] },
  { kind: 'words', q: 'Lyla CAPTCHA on BlueDragon', answers: [a(MANUAL, 'Lyla CAPTCHA is not supported')] },
  { kind: 'words', q: 'default admin password', answers: [a(MANUAL, 'Use admin for the username')] },
  { kind: 'words', q: 'trackback spam', answers: [a(MANUAL, 'trackback spam')] },
  { kind: 'words', q: 'podcasting support', answers: [a(MANUAL, 'Podcasting support was added')] },
  { kind: 'words', q: 'comment moderation', answers: [a(MANUAL, 'comment moderation')] },
  { kind: 'words', q: 'print format ColdFusion MX 7', answers: [a(MANUAL, 'print format'), a(MANUAL, 'Print support is only enabled')] },
  { kind: 'words', q: 'tracked changes in a reviewed document', answers: [a(REVIEWING, 'test of reviewing')] },
  { kind: 'words', q: 'parsing the Word file in node', answers: [a(CHINESE, 'parsing the Word file in node')] },
  // Japanese and Chinese: compounds inside longer runs
  { kind: 'cjk', q: '原子力発電所', answers: [a(NUCLEAR, '原子力発電所')] },
  { kind: 'cjk', q: '福島第一原子力発電所', answers: [a(NUCLEAR, '福島第一原子力発電所')] },
  { kind: 'cjk', q: '柏崎刈羽', answers: [a(NUCLEAR, '柏崎刈羽')] },
  { kind: 'cjk', q: '再稼働', answers: [a(NUCLEAR, '再稼働')] },
  { kind: 'cjk', q: '原子力発電所の現状', answers: [a(NUCLEAR, '原子力発電所の現状')] },
  { kind: 'cjk', q: '测试', answers: [a(CHINESE, '测试')] },
  { kind: 'cjk', q: '解析Word文档', answers: [a(CHINESE, '解析Word文档')] },
];

const TOP = 10;
const RECALL_AT = 5;

/** The query builder of the previous release (src/knowledge/search.ts before phrases and CJK words). */
const STOPWORDS = (await dist('src/text/stopwords.js')).STOPWORDS;
function previousFtsQuery(text) {
  const words = [...new Set((text.normalize('NFKC').match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => w.toLowerCase()))];
  const meaningful = words.filter((w) => !STOPWORDS.has(w));
  const unique = (meaningful.length ? meaningful : words).slice(0, 32);
  return unique.length ? unique.map((w) => `"${w}"`).join(' OR ') : null;
}

/** The SQL of searchKnowledge, with the MATCH expression given. */
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

const flat = (text) => text.replace(/\s+/g, ' ');
const isRelevant = (result, answers) => answers.some((answer) => answer.files.includes(result.fileName) && flat(result.text).includes(answer.contains));

/** 1-based rank of the first relevant result, or null. */
function firstRelevant(results, answers) {
  const index = results.findIndex((result) => isRelevant(result, answers));
  return index === -1 ? null : index + 1;
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
  const n = ranks.length;
  return {
    queries: n,
    recallAt5: round(ranks.filter((r) => r !== null && r <= RECALL_AT).length / n, 3),
    mrrAt10: round(ranks.reduce((sum, r) => sum + (r === null ? 0 : 1 / r), 0) / n, 3),
  };
}

await runBench('bench/retrieval', async () => {
  const { withoutWordSeparators } = await dist('src/text/cjk.js');
  const { searchKnowledge } = await dist('src/knowledge/search.js');

  const before = await indexFixtures('before', (chunks) => chunks.map(withoutWordSeparators));
  const after = await indexFixtures('after', (chunks) => chunks);

  const rows = [];
  for (const { kind, q, answers } of QUERIES) {
    const old = searchWith(before.sqlite, before.siteId, previousFtsQuery(q));
    const now = searchKnowledge(after.app.database.db, after.siteId, q, { limit: TOP });
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
