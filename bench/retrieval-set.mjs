// The retrieval evaluation's data and scoring, shared by bench/retrieval.mjs (SQLite, before
// and after) and test/knowledge/postgres-search.test.ts (SQLite beside PostgreSQL): the fixture files
// indexed, the queries with the passages that answer them, written from reading the documents,
// and recall@5 / MRR@10 over the ranks of the first relevant results.

export const FILES = [
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
export const QUERIES = [
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

export const TOP = 10;
export const RECALL_AT = 5;

const flat = (text) => text.replace(/\s+/g, ' ');

/** A result is relevant when it comes from one of an answer's files and contains the answer's words. */
const isRelevant = (result, answers) => answers.some((answer) => answer.files.includes(result.fileName) && flat(result.text).includes(answer.contains));

/** 1-based rank of the first relevant result, or null. */
export function firstRelevant(results, answers) {
  const index = results.findIndex((result) => isRelevant(result, answers));
  return index === -1 ? null : index + 1;
}

/**
 * recall@5 (share of queries with a relevant result in the first five) and MRR@10 (mean of
 * 1/rank of the first relevant result within ten, 0 when none), unrounded, from those ranks.
 */
export function retrievalFigures(ranks) {
  const n = ranks.length;
  return {
    queries: n,
    recallAt5: ranks.filter((r) => r !== null && r <= RECALL_AT).length / n,
    mrrAt10: ranks.reduce((sum, r) => sum + (r === null || r > TOP ? 0 : 1 / r), 0) / n,
  };
}
