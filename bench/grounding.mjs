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
// Three sets are measured, each on its own site: the team's own (grounding-set.mjs, documents in
// test/fixtures/grounding), a second one written apart from the rules (grounding-second-set.mjs,
// test/fixtures/grounding-second), whose held-out part is reported as figures only (its topics
// are not printed one by one unless --show-held-out asks for them), and a third written after
// the rules by a writer who saw neither them nor the other sets (grounding-third-set.mjs,
// test/fixtures/grounding-third), held out whole: figures only.
//
// Options: --json prints only the figures as JSON on stdout (the rest goes to stderr);
//          --only <kind> runs the topics of one kind; --set first|second|third runs one set;
//          --show-held-out prints the held-out topics' lines too;
//          --explain <text> prints, for each topic containing the text, the topic's terms and
//          how each retrieved document was judged (explainGrounding).

import fs from 'node:fs';
import path from 'node:path';
import { FIXTURES_DIR, buildApp, dist, makeApiKey, multipartFile, pollUntil, printResult, printTable, round, runBench, tempDir, verdict } from './lib.mjs';
import * as firstSet from './grounding-set.mjs';
import * as secondSet from './grounding-second-set.mjs';
import * as thirdSet from './grounding-third-set.mjs';

const { TARGETS, groundingFigures } = firstSet;



function parseArgs(argv) {
  const options = { json: false, only: null, set: null, showHeldOut: false, explain: null };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--json') options.json = true;
    else if (arg === '--only') options.only = argv[++i] ?? null;
    else if (arg.startsWith('--only=')) options.only = arg.slice('--only='.length);
    else if (arg === '--set') options.set = argv[++i] ?? null;
    else if (arg === '--show-held-out') options.showHeldOut = true;
    else if (arg === '--explain') options.explain = (argv[++i] ?? '').toLowerCase();
    else throw new Error(`unknown argument ${arg} (use --json, --only <kind>, --set first|second|third, --show-held-out, --explain <text>)`);
  }
  const kinds = new Set([...firstSet.KINDS, ...secondSet.KINDS, ...thirdSet.KINDS]);
  if (options.only !== null && !kinds.has(options.only)) throw new Error(`--only takes one of ${[...kinds].join(', ')}`);
  if (options.set !== null && !['first', 'second', 'third'].includes(options.set)) throw new Error('--set takes first, second or third');
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

/** Uploads every document through the API and waits until each one is indexed. */

const SETS = [
  { name: 'first', label: "the team's own set", dir: path.join(FIXTURES_DIR, 'grounding'), documents: firstSet.DOCUMENTS, parts: [{ name: 'all', topics: firstSet.TOPICS, shown: true }], secondReader: firstSet.SECOND_READER },
  {
    name: 'second',
    label: 'the second set',
    dir: path.join(FIXTURES_DIR, 'grounding-second'),
    documents: secondSet.DOCUMENTS,
    parts: [
      { name: 'tuning', topics: secondSet.TOPICS, shown: true },
      { name: 'held-out', topics: secondSet.HELD_OUT, shown: false },
    ],
  },
  {
    name: 'third',
    label: 'the third set, written after the rules by a writer who saw neither them nor the other sets, held out whole',
    dir: path.join(FIXTURES_DIR, 'grounding-third'),
    documents: thirdSet.DOCUMENTS,
    parts: [{ name: 'held-out', topics: thirdSet.TOPICS, shown: false }],
  },
];

const MIME = { txt: 'text/plain', md: 'text/markdown', csv: 'text/csv', pdf: 'application/pdf', doc: 'application/msword', docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' };
const figure = (value) => round(value, 3);

/** Uploads every document through the API and waits until each one is indexed. */
async function uploadDocuments(app, apiKey, dir, documents) {
  const headers = { authorization: `Bearer ${apiKey}` };
  const ids = new Map();
  for (const name of documents) {
    const form = multipartFile(name, fs.readFileSync(path.join(dir, name)), MIME[path.extname(name).slice(1)]);
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
    { intervalMs: 100, timeoutMs: 300_000, what: 'every document indexed' },
  );
  const failed = [...statuses].filter(([, item]) => item.status !== 'indexed');
  if (failed.length) throw new Error(`not indexed: ${failed.map(([name, item]) => `${name} (${item.status}: ${item.error ?? '?'})`).join(', ')}`);
  return ids;
}

const readingRow = (f) => ({ relevant: f.relevant, drawn: f.drawn, 'drawn & relevant': f.hits, precision: figure(f.precision), recall: figure(f.recall) });
const row = (kind, f) => ({ kind, topics: f.topics, ...readingRow(f), exact: `${f.exact}/${f.topics}` });

function printTopics(results) {
  console.log('\nper topic: ✓ drawn and relevant, ✗ drawn but not relevant, missed: relevant but not drawn');
  for (const { kind, topic, relevant, drawn: files } of results) {
    const want = new Set(relevant);
    const ok = files.length === want.size && files.every((file) => want.has(file));
    const got = files.length ? files.map((file) => `${file} ${want.has(file) ? '✓' : '✗'}`).join(', ') : '(none)';
    const missed = relevant.filter((file) => !files.includes(file));
    console.log(`${ok ? '✓' : '✗'} [${kind}] ${topic}\n    drawn: ${got}${missed.length ? `; missed: ${missed.join(', ')}` : ''}${relevant.length ? '' : '; relevant: (none)'}`);
  }
}

/**
 * The figures against a second reader's judgments (`secondReader`: topic -> relevant documents,
 * where they differ), and on the (topic, document) pairs both readers agree on: a pair judged
 * differently counts neither as drawn nor as relevant.
 */
function secondReading(results, secondReader) {
  const topics = new Set(results.map((result) => result.topic));
  const unknown = Object.keys(secondReader).filter((topic) => !topics.has(topic));
  if (unknown.length && options.only === null) throw new Error(`the second reader judged topics the set does not have: ${unknown.join('; ')}`);
  const theirs = results.map((result) => ({ ...result, relevant: secondReader[result.topic] ?? result.relevant }));
  const agreed = results.map((result) => {
    const other = secondReader[result.topic] ?? result.relevant;
    const disputed = (file) => result.relevant.includes(file) !== other.includes(file);
    return { ...result, relevant: result.relevant.filter((file) => !disputed(file)), drawn: result.drawn.filter((file) => !disputed(file)) };
  });
  return { secondReader: groundingFigures(theirs).overall, bothAgree: groundingFigures(agreed).overall };
}

/** --explain: the topic's terms and each retrieved document's judgement. */
function explain(req, explainGrounding) {
  const { profile, judgements } = explainGrounding(req.topic, req.passages);
  const flags = (term) => Object.entries(term).filter(([, value]) => value === true).map(([key]) => key).join(' ');
  console.log(`\nexplain "${req.topic}": ${profile.terms.map((term) => `${term.stems.join(' ')} [${flags(term)} w${term.weight}]`).join(', ')}`);
  if (profile.headQualifiers?.length) console.log(`  head qualifiers: ${profile.headQualifiers.map((term) => term.stems.join(' ')).join(', ')}`);
  for (const { fileName, ...judgement } of judgements) console.log(`  ${fileName}: ${JSON.stringify(judgement)}`);
}

/** Measures one set on a site of its own: every part's figures, and both parts together. */
async function measureSet(set, writeGroundedPost, passagesToGroundOn, explainGrounding) {
  const apiKey = makeApiKey();
  const { app, close } = await buildApp(tempDir(`blog-bench-grounding-${set.name}-`), { env: { BOOTSTRAP_API_KEY: apiKey, GENERATOR: 'builtin' } });
  try {
    const siteId = app.sites.authenticate(apiKey).site.id;
    await uploadDocuments(app, apiKey, set.dir, set.documents);
    console.log(`\n=== ${set.label} (${set.name}): ${set.documents.length} documents uploaded and indexed`);

    // A generator that writes nothing and records the files the post would be grounded on.
    let drawn;
    const recorder = {
      provider: 'builtin',
      model: 'builtin',
      async generate(req) {
        drawn = new Set(passagesToGroundOn(req).map((passage) => passage.fileName));
        if (options.explain && req.topic.toLowerCase().includes(options.explain)) explain(req, explainGrounding);
        return { post: { title: req.topic, description: '', category: 'x', tags: [], content: '' }, provider: 'builtin', model: 'builtin' };
      },
    };
    const parts = {};
    const everything = [];
    for (const part of set.parts) {
      const results = [];
      for (const { kind, topic, relevant } of part.topics.filter((topic) => options.only === null || topic.kind === options.only)) {
        drawn = null;
        await writeGroundedPost({ knowledge: app.knowledge, generator: recorder }, siteId, { topic });
        if (drawn === null) throw new Error(`the generator was not called for "${topic}"`);
        results.push({ kind, topic, relevant, drawn: [...drawn] });
      }
      if (results.length === 0) continue;
      const figures = groundingFigures(results);
      parts[part.name] = { figures, results, shown: part.shown };
      everything.push(...results);
      printTable(`${set.name} set, ${part.name} topics: documents drawn on, per kind of topic (micro-averaged over topic-document pairs)`, [
        ...Object.entries(figures.kinds).map(([kind, f]) => row(kind, f)),
        row('all', figures.overall),
      ]);
      if (part.shown || options.showHeldOut) printTopics(results);
      else console.log(`(${results.length} held-out topics: figures only; --show-held-out prints them)`);
    }
    const figures = groundingFigures(everything);
    if (!set.secondReader) return { parts, figures, topics: everything.length };
    const reading = secondReading(everything, set.secondReader);
    printTable(`${set.name} set as judged by each reader (information: the targets are judged on the set's own judgments)`, [
      { 'judged by': "the set's own judgments", ...readingRow(figures.overall) },
      { 'judged by': 'a second reader, blind', ...readingRow(reading.secondReader) },
      { 'judged by': 'pairs both readers agree on', ...readingRow(reading.bothAgree) },
    ]);
    return { parts, figures, topics: everything.length, reading };
  } finally {
    await close();
  }
}

await runBench('bench/grounding', async () => {
  const { writeGroundedPost } = await dist('src/generation/grounded.js');
  const { passagesToGroundOn, explainGrounding } = await dist('src/generation/relevance.js');

  const measured = {};
  for (const set of SETS.filter((set) => options.set === null || options.set === set.name)) {
    measured[set.name] = await measureSet(set, writeGroundedPost, passagesToGroundOn, explainGrounding);
  }

  const targets = [];
  for (const [name, { parts, figures }] of Object.entries(measured)) {
    const lines = [[`${name} set`, figures], ...(Object.keys(parts).length > 1 ? Object.entries(parts).map(([part, p]) => [`${name} set, ${part}`, p.figures]) : [])];
    for (const [label, f] of lines) {
      targets.push({ measure: `recall, ${label}`, value: figure(f.overall.recall), target: `>= ${TARGETS.recall}`, verdict: verdict(f.overall.recall >= TARGETS.recall) });
      targets.push({ measure: `precision, ${label}`, value: figure(f.overall.precision), target: `>= ${TARGETS.precision}`, verdict: verdict(f.overall.precision >= TARGETS.precision) });
    }
    for (const [kind, f] of Object.entries(figures.kinds)) {
      targets.push({ measure: `recall, ${name} set, ${kind}`, value: figure(f.recall), target: `>= ${TARGETS.kindFloor}`, verdict: verdict(f.recall >= TARGETS.kindFloor) });
      targets.push({ measure: `precision, ${name} set, ${kind}`, value: figure(f.precision), target: `>= ${TARGETS.kindFloor}`, verdict: verdict(f.precision >= TARGETS.kindFloor) });
    }
  }
  printTable('targets', targets);
  const misses = Object.entries(measured).flatMap(([name, { figures }]) => figures.misses.map((miss) => `${name} set: ${miss}`));
  console.log(`\nverdict: ${misses.length === 0 ? 'every target met' : `targets missed (${misses.length}): ${misses.join('; ')}`}`);

  const summary = {
    only: options.only,
    targets: TARGETS,
    pass: misses.length === 0,
    misses,
    sets: Object.fromEntries(
      Object.entries(measured).map(([name, { parts, figures, topics, reading }]) => [
        name,
        {
          topics,
          overall: figures.overall,
          ...(reading ? { secondReader: reading.secondReader, bothAgree: reading.bothAgree } : {}),
          kinds: figures.kinds,
          parts: Object.fromEntries(Object.entries(parts).map(([part, p]) => [part, { overall: p.figures.overall, kinds: p.figures.kinds, ...(p.shown || options.showHeldOut ? { topicResults: p.results } : {}) }])),
        },
      ]),
    ),
  };
  if (options.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  else printResult('grounding', { ...summary, sets: Object.fromEntries(Object.entries(summary.sets).map(([name, set]) => [name, { topics: set.topics, overall: set.overall, ...(set.secondReader ? { secondReader: set.secondReader, bothAgree: set.bothAgree } : {}), parts: Object.fromEntries(Object.entries(set.parts).map(([part, p]) => [part, p.overall])) }])) });
}, { timeLimitMs: 900_000 });

console.log = log;
