// npm run bench:writer: the posts the offline (builtin) writer makes from the test fixtures,
// written to a folder for reading, with a table of what each one is made of.
//
// The readable fixtures are uploaded to a fresh site (the coffee guide twice, as a user who
// uploads a file again would), then each topic below goes through the same path as
// POST /api/v1/posts/generate: knowledge search, the relevance floor and de-duplication
// (writeGroundedPost), then the builtin writer. Topics are related, loosely related and
// unrelated to the fixtures, and phrased as a subject (singular, plural), a question and a
// "how to".
//
// Per post: mode (written from sources, or an outline draft), words against the length target,
// sentences, the share of them found word for word in the uploaded documents, sentences that
// appear twice (must be 0), and files cited that hold no passage relevant to the topic (must be
// 0; "relevant" here is this script's own judgement, written from reading the documents).
//
// Output folder: the first argument, else BENCH_WRITER_OUT, else <tmp>/blog-writer-posts.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FIXTURES_DIR, buildApp, dist, makeApiKey, multipartFile, printResult, printTable, round, runBench, tempDir, verdict } from './lib.mjs';

const OUT_DIR = path.resolve(process.argv[2] ?? process.env.BENCH_WRITER_OUT ?? path.join(os.tmpdir(), 'blog-writer-posts'));

const UPLOADS = [
  ['text/coffee-brewing-guide.md', 'coffee-brewing-guide.md'],
  ['text/coffee-brewing-guide.md', 'coffee-brewing-guide.md'], // the same file uploaded again
  ['text/release-notes-2026.txt'],
  ['text/product-catalog.csv'],
  ['word/bigfile-01.doc'],
  ['word/bigfile-01.docx'],
  ['word/test03.doc'],
  ['word/test03.docx'],
  ['word/test11.doc'],
  ['pdf/fd_ins_8859.pdf'],
  ['pdf/i216_nuclear.pdf'],
];

const COFFEE = ['coffee-brewing-guide.md'];
const NOTES = ['release-notes-2026.txt'];
const CATALOG = ['product-catalog.csv'];
const MANUAL = ['bigfile-01.doc', 'bigfile-01.docx'];
const LICENCES = ['test03.doc', 'test03.docx'];
const FORM = ['fd_ins_8859.pdf'];
const NUCLEAR = ['i216_nuclear.pdf'];

/** Topics, with the files a reader would accept as sources for them. */
const TOPICS = [
  { topic: 'How to brew better coffee at home', relation: 'related', phrasing: 'how-to', relevant: COFFEE, style: 'professional', tone: 'informative', length: 'medium', includeExamples: true },
  { topic: 'Choosing the right grind size', relation: 'related', phrasing: 'singular', relevant: COFFEE, style: 'casual', tone: 'conversational', length: 'short' },
  { topic: 'What makes a good pour-over?', relation: 'related', phrasing: 'question', relevant: COFFEE, style: 'technical', tone: 'authoritative', length: 'medium' },
  { topic: 'Orbit Analytics release notes for 2026', relation: 'related', phrasing: 'plural', relevant: NOTES, style: 'academic', tone: 'informative', length: 'medium', includeExamples: true },
  { topic: 'Installing BlogCFC', relation: 'related', phrasing: 'singular', relevant: MANUAL, style: 'technical', tone: 'informative', length: 'long' },
  { topic: 'Comment moderation and trackback spam in BlogCFC', relation: 'related', phrasing: 'singular', relevant: MANUAL, style: 'professional', tone: 'persuasive', length: 'medium' },
  { topic: 'Open source licenses compared', relation: 'related', phrasing: 'plural', relevant: [...LICENCES, ...MANUAL], style: 'academic', tone: 'authoritative', length: 'medium' },
  { topic: 'The District of Columbia homebuyer credit', relation: 'related', phrasing: 'singular', relevant: FORM, style: 'professional', tone: 'informative', length: 'short' },
  { topic: 'Camping gear for a weekend trip', relation: 'loosely related', phrasing: 'plural', relevant: CATALOG, style: 'casual', tone: 'persuasive', length: 'medium' },
  { topic: 'Cold brew coffee', relation: 'loosely related', phrasing: 'singular', relevant: COFFEE, style: 'creative', tone: 'conversational', length: 'medium' },
  { topic: 'Why do roasted coffee beans go stale?', relation: 'loosely related', phrasing: 'question', relevant: COFFEE, style: 'casual', tone: 'informative', length: 'short' },
  { topic: 'Remote work tips for new managers', relation: 'unrelated', phrasing: 'plural', relevant: [], style: 'professional', tone: 'informative', length: 'medium' },
  { topic: 'How to train for a marathon', relation: 'unrelated', phrasing: 'how-to', relevant: [], style: 'casual', tone: 'persuasive', length: 'short', includeExamples: true },
  { topic: 'Kubernetes autoscaling for small teams', relation: 'unrelated', phrasing: 'singular', relevant: [], style: 'technical', tone: 'authoritative', length: 'long' },
  { topic: '原子力発電所の現状', relation: 'related', phrasing: 'singular (Japanese)', relevant: NUCLEAR, style: 'professional', tone: 'informative', length: 'short' },
];

const normalize = (text) => text.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

/** The post's body sentences (headings, citations and Markdown markers left out). */
function bodySentences(content) {
  const sentences = [];
  for (const block of content.split(/\n{2,}/)) {
    if (/^#{1,6} /.test(block) || /^\*To cover:\*/.test(block)) continue;
    for (let line of block.split('\n')) {
      line = line
        .replace(/^\s*(?:[-*]|\d+\.)\s+/, '')
        .replace(/^\*\*[^*]+\*\*(?: \([^)]*\))?: /, '') // a record's title and details: its body follows
        .replace(/\(source: \*[^*]+\*\)|\[\d+\]|^Source: \*[^*]+\*\.$/g, '')
        .replace(/[*_`]/g, '')
        .trim();
      if (!line) continue;
      for (const sentence of line.split(/(?<=[.!?])\s+(?=["“(]?[\p{Lu}\p{N}])/u)) if (/\p{L}/u.test(sentence)) sentences.push(sentence.trim());
    }
  }
  return sentences;
}

function citedFiles(content, knownNames) {
  const cited = new Set();
  for (const match of content.matchAll(/\*([^*\n]+?\.[a-z0-9]{2,4})\*/gi)) if (knownNames.has(match[1])) cited.add(match[1]);
  const references = content.split(/^## References$/m)[1];
  if (references) for (const match of references.matchAll(/^\d+\. (.+)$/gm)) cited.add(match[1].trim());
  return [...cited];
}

const slug = (text) => text.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-|-$/g, '').slice(0, 60) || 'post';

await runBench('bench/writer', async () => {
  const { extractChunks, extractText } = await dist('src/knowledge/extract.js');
  const { writeGroundedPost } = await dist('src/generation/grounded.js');
  const { BuiltinGenerator, countWords } = await dist('src/generation/builtin/index.js');
  const { WORD_TARGETS } = await dist('src/generation/types.js');
  const { withoutTransition } = await dist('src/generation/builtin/prose.js');

  const apiKey = makeApiKey();
  const { app, close } = await buildApp(tempDir('blog-bench-writer-'), { env: { BOOTSTRAP_API_KEY: apiKey }, chunkSource: extractChunks });
  const siteId = app.sites.authenticate(apiKey).site.id;
  const sourceTexts = [];
  const names = new Set();
  for (const [file, name = path.basename(file)] of UPLOADS) {
    const form = multipartFile(name, fs.readFileSync(path.join(FIXTURES_DIR, file)));
    const res = await app.inject({ method: 'POST', url: '/api/v1/knowledge', payload: form.body, headers: { authorization: `Bearer ${apiKey}`, 'content-type': form.contentType } });
    if (res.statusCode !== 201) throw new Error(`upload of ${file}: ${res.statusCode} ${res.body}`);
    names.add(name);
    sourceTexts.push(normalize(await extractText(path.join(FIXTURES_DIR, file), path.extname(file).slice(1))));
  }
  await app.indexer.whenIdle();
  const corpus = sourceTexts.join(' | ');

  fs.mkdirSync(OUT_DIR, { recursive: true });
  for (const old of fs.readdirSync(OUT_DIR)) if (/^\d\d-.*\.md$/.test(old)) fs.rmSync(path.join(OUT_DIR, old));

  const generator = new BuiltinGenerator();
  const rows = [];
  for (const [i, spec] of TOPICS.entries()) {
    const started = performance.now();
    const { result } = await writeGroundedPost({ knowledge: app.knowledge, generator }, siteId, { ...spec, includeExamples: spec.includeExamples ?? false });
    const ms = performance.now() - started;
    const { post } = result;
    const outline = post.content.startsWith('*Outline draft.*');
    const sentences = bodySentences(post.content);
    // A transition the writer put before a source sentence ("Also, ...") is not the source's.
    const fromSources = sentences.filter((s) => normalize(s).length > 0 && corpus.includes(normalize(withoutTransition(s))));
    const counts = new Map();
    for (const s of sentences) counts.set(normalize(s), (counts.get(normalize(s)) ?? 0) + 1);
    const duplicates = [...counts.values()].reduce((sum, n) => sum + (n > 1 ? n - 1 : 0), 0);
    const cited = citedFiles(post.content, names);
    const wrongCitations = cited.filter((file) => !spec.relevant.includes(file));
    const words = countWords(post.content);
    const target = WORD_TARGETS[spec.length];
    const file = `${String(i + 1).padStart(2, '0')}-${slug(spec.topic)}.md`;
    const row = {
      '#': i + 1,
      topic: spec.topic.length > 44 ? `${spec.topic.slice(0, 43)}…` : spec.topic,
      relation: spec.relation,
      phrasing: spec.phrasing,
      mode: outline ? 'outline' : 'sources',
      words,
      target,
      'words/target': round(words / target, 2),
      sentences: sentences.length,
      'from sources': sentences.length ? round(fromSources.length / sentences.length, 2) : 0,
      duplicates,
      cited: cited.length,
      'cited, not relevant': wrongCitations.length,
      ms: round(ms, 0),
      file,
    };
    rows.push(row);
    const front = [
      '---',
      `topic: ${JSON.stringify(spec.topic)}`,
      `style: ${spec.style}, tone: ${spec.tone}, length: ${spec.length}, examples: ${spec.includeExamples ?? false}`,
      `title: ${JSON.stringify(post.title)}`,
      `description: ${JSON.stringify(post.description)}`,
      `category: ${JSON.stringify(post.category)}`,
      `tags: ${JSON.stringify(post.tags)}`,
      `measured: ${JSON.stringify({ words, target, sentences: sentences.length, fromSources: fromSources.length, duplicates, cited, wrongCitations })}`,
      '---',
      '',
      `# ${post.title}`,
      '',
    ].join('\n');
    fs.writeFileSync(path.join(OUT_DIR, file), front + post.content);
  }
  await close();

  printTable('posts (files in the output folder)', rows);
  const grounded = rows.filter((r) => r.mode === 'sources');
  const totals = {
    posts: rows.length,
    fromSources: grounded.length ? round(grounded.reduce((sum, r) => sum + r['from sources'], 0) / grounded.length, 2) : null,
    duplicates: rows.reduce((sum, r) => sum + r.duplicates, 0),
    citedNotRelevant: rows.reduce((sum, r) => sum + r['cited, not relevant'], 0),
    unrelatedWithSources: rows.filter((r) => r.relation === 'unrelated' && r.cited > 0).length,
  };
  printTable('targets', [
    { measure: 'duplicate sentences', value: totals.duplicates, target: '0', verdict: verdict(totals.duplicates === 0) },
    { measure: 'files cited without a relevant passage', value: totals.citedNotRelevant, target: '0', verdict: verdict(totals.citedNotRelevant === 0) },
    { measure: 'unrelated topics citing a source', value: totals.unrelatedWithSources, target: '0', verdict: verdict(totals.unrelatedWithSources === 0) },
    { measure: 'mean share of sentences from sources (posts from sources)', value: totals.fromSources, target: '-', verdict: '-' },
  ]);
  console.log(`\nposts written to ${OUT_DIR}`);
  printResult('writer', { outDir: OUT_DIR, totals, posts: rows });
}, { timeLimitMs: 170_000 });
