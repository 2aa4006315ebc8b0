// npm run bench:grounding: does a post draw on the documents a person would hand its writer?
//
// Every document of test/fixtures/grounding is uploaded to a fresh site through the API
// (POST /api/v1/knowledge, multipart) and indexed by the service's own indexer (extraction in
// its child process). Then, for each topic of grounding-set.mjs, the post is asked for the way
// POST /api/v1/posts/generate asks for it (writeGroundedPost: knowledge search, then the
// generator), with a recording generator that keeps the files of the passages the generator
// would ground the post on (passagesToGroundOn, as both real generators choose them) and writes
// nothing. Those files are compared with the topic's relevant documents.
//
// Reported: precision and recall micro-averaged over (topic, document) pairs, per kind of topic
// and overall, and a line per topic (✓ drawn and relevant, ✗ drawn but not relevant, "missed"
// relevant but not drawn). Targets: recall >= 0.9 and precision >= 0.95 overall, no kind below
// 0.8 on either. A missed target is a finding, not an error: the exit code is 0 unless the
// measurement itself failed.
//
// Options: --json prints only the figures as JSON on stdout (the rest goes to stderr);
//          --only <kind> runs the topics of one kind.

import fs from 'node:fs';
import path from 'node:path';
import { FIXTURES_DIR, buildApp, dist, makeApiKey, multipartFile, pollUntil, printResult, printTable, round, runBench, tempDir, verdict } from './lib.mjs';
import { DOCUMENTS, KINDS, TARGETS, TOPICS, groundingFigures } from './grounding-set.mjs';

const DOCUMENTS_DIR = path.join(FIXTURES_DIR, 'grounding');

function parseArgs(argv) {
  const options = { json: false, only: null };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--json') options.json = true;
    else if (arg === '--only') options.only = argv[++i] ?? null;
    else if (arg.startsWith('--only=')) options.only = arg.slice('--only='.length);
    else throw new Error(`unknown argument ${arg} (use --json, --only <kind>)`);
  }
  if (options.only !== null && !KINDS.includes(options.only)) throw new Error(`--only takes one of ${KINDS.join(', ')}`);
  return options;
}

let options;
try {
  options = parseArgs(process.argv.slice(2));
} catch (error) {
  console.error(`bench/grounding: ${error.message}`);
  process.exit(2);
}
// With --json, stdout carries the JSON alone.
const log = console.log;
if (options.json) console.log = (...args) => console.error(...args);

const MIME = { txt: 'text/plain', md: 'text/markdown', csv: 'text/csv', pdf: 'application/pdf', doc: 'application/msword', docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' };
const figure = (value) => round(value, 3);

/** Uploads every document through the API and waits until each one is indexed. */
async function uploadDocuments(app, apiKey) {
  const headers = { authorization: `Bearer ${apiKey}` };
  const ids = new Map();
  for (const name of DOCUMENTS) {
    const form = multipartFile(name, fs.readFileSync(path.join(DOCUMENTS_DIR, name)), MIME[path.extname(name).slice(1)]);
    const res = await app.inject({ method: 'POST', url: '/api/v1/knowledge', payload: form.body, headers: { ...headers, 'content-type': form.contentType } });
    if (res.statusCode !== 201) throw new Error(`upload of ${name}: ${res.statusCode} ${res.body}`);
    ids.set(name, res.json().data.knowledge.id);
  }
  const statuses = await pollUntil(
    async () => {
      const now = new Map();
      for (const [name, id] of ids) {
        const res = await app.inject({ method: 'GET', url: `/api/v1/knowledge/${id}`, headers });
        if (res.statusCode !== 200) throw new Error(`GET /api/v1/knowledge/${id} (${name}): ${res.statusCode} ${res.body}`);
        now.set(name, res.json().data.knowledge);
      }
      return [...now.values()].every((item) => item.status === 'indexed' || item.status === 'failed') ? now : null;
    },
    { intervalMs: 100, timeoutMs: 120_000, what: 'every document indexed' },
  );
  const failed = [...statuses].filter(([, item]) => item.status !== 'indexed');
  if (failed.length) throw new Error(`not indexed: ${failed.map(([name, item]) => `${name} (${item.status}: ${item.error ?? '?'})`).join(', ')}`);
  return ids;
}

await runBench('bench/grounding', async () => {
  const { writeGroundedPost } = await dist('src/generation/grounded.js');
  const { passagesToGroundOn } = await dist('src/generation/relevance.js');

  const apiKey = makeApiKey();
  const { app, close } = await buildApp(tempDir('blog-bench-grounding-'), { env: { BOOTSTRAP_API_KEY: apiKey, GENERATOR: 'builtin' } });
  const siteId = app.sites.authenticate(apiKey).site.id;
  await uploadDocuments(app, apiKey);
  console.log(`${DOCUMENTS.length} documents uploaded and indexed`);

  // A generator that writes nothing and records the files the post would be grounded on.
  let drawn;
  const recorder = {
    provider: 'builtin',
    model: 'builtin',
    async generate(req) {
      drawn = new Set(passagesToGroundOn(req).map((passage) => passage.fileName));
      return { post: { title: req.topic, description: '', category: 'x', tags: [], content: '' }, provider: 'builtin', model: 'builtin' };
    },
  };

  const topics = TOPICS.filter((topic) => options.only === null || topic.kind === options.only);
  const results = [];
  for (const { kind, topic, relevant } of topics) {
    drawn = null;
    await writeGroundedPost({ knowledge: app.knowledge, generator: recorder }, siteId, { topic });
    if (drawn === null) throw new Error(`the generator was not called for "${topic}"`);
    results.push({ kind, topic, relevant, drawn: [...drawn] });
  }
  await close();

  const figures = groundingFigures(results);
  const row = (kind, f) => ({ kind, topics: f.topics, relevant: f.relevant, drawn: f.drawn, 'drawn & relevant': f.hits, precision: figure(f.precision), recall: figure(f.recall), exact: `${f.exact}/${f.topics}` });
  printTable('documents drawn on, per kind of topic (micro-averaged over topic-document pairs)', [
    ...Object.entries(figures.kinds).map(([kind, f]) => row(kind, f)),
    row('all', figures.overall),
  ]);

  console.log('\nper topic: ✓ drawn and relevant, ✗ drawn but not relevant, missed: relevant but not drawn');
  for (const { kind, topic, relevant, drawn: files } of results) {
    const want = new Set(relevant);
    const ok = files.length === want.size && files.every((file) => want.has(file));
    const got = files.length ? files.map((file) => `${file} ${want.has(file) ? '✓' : '✗'}`).join(', ') : '(none)';
    const missed = relevant.filter((file) => !files.includes(file));
    console.log(`${ok ? '✓' : '✗'} [${kind}] ${topic}\n    drawn: ${got}${missed.length ? `; missed: ${missed.join(', ')}` : ''}${relevant.length ? '' : '; relevant: (none)'}`);
  }

  const targets = [
    { measure: 'recall, overall', value: figure(figures.overall.recall), target: `>= ${TARGETS.recall}`, verdict: verdict(figures.overall.recall >= TARGETS.recall) },
    { measure: 'precision, overall', value: figure(figures.overall.precision), target: `>= ${TARGETS.precision}`, verdict: verdict(figures.overall.precision >= TARGETS.precision) },
    ...Object.entries(figures.kinds).flatMap(([kind, f]) => [
      { measure: `recall, ${kind}`, value: figure(f.recall), target: `>= ${TARGETS.kindFloor}`, verdict: verdict(f.recall >= TARGETS.kindFloor) },
      { measure: `precision, ${kind}`, value: figure(f.precision), target: `>= ${TARGETS.kindFloor}`, verdict: verdict(f.precision >= TARGETS.kindFloor) },
    ]),
  ];
  printTable('targets', targets);
  console.log(`\nverdict: ${figures.pass ? 'every target met' : `targets missed (${figures.misses.length}): ${figures.misses.join('; ')}`}`);

  const summary = {
    documents: DOCUMENTS.length,
    topics: results.length,
    only: options.only,
    targets: TARGETS,
    pass: figures.pass,
    misses: figures.misses,
    overall: figures.overall,
    kinds: figures.kinds,
    topicResults: results.map(({ kind, topic, relevant, drawn: files }) => ({ kind, topic, relevant, drawn: files })),
  };
  if (options.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  else printResult('grounding', { ...summary, topicResults: undefined });
}, { timeLimitMs: 170_000 });

console.log = log;
