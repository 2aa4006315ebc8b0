import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { getEventListeners } from 'node:events';
import t, { type Test } from 'tap';
import { extensionOf } from '../../src/knowledge/detect.js';
import { extractText, sanitizeText } from '../../src/knowledge/extract.js';
import { ExtractionError } from '../../src/knowledge/extractor-protocol.js';
import { extractChunksInWorker } from '../../src/knowledge/extract-runner.js';
import { chunkText } from '../../src/knowledge/chunk.js';

const FIXTURES = path.resolve(import.meta.dirname ?? path.dirname(fileURLToPath(import.meta.url)), '../fixtures');
const fixture = (name: string) => path.join(FIXTURES, name);
const CONTROL_CHARACTER = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/;

const extract = (name: string) => extractText(fixture(name), extensionOf(name)!);

/** Asserts that `promise` rejects with an ExtractionError (the class itself) whose message matches. */
async function rejectsWithExtractionError(t: Test, promise: Promise<unknown>, message: string | RegExp, what?: string) {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  const label: string = what ?? String(message);
  t.ok(error instanceof ExtractionError, `${label}: ExtractionError`);
  if (typeof message === 'string') t.equal((error as Error | undefined)?.message, message, label);
  else t.match((error as Error | undefined)?.message, message, label);
}

/** The phrases the fixtures README promises, per file. */
const EXPECTED_PHRASES: Record<string, string[]> = {
  'word/test03.doc': ['GPL v3.0', 'Apache v2.0'],
  'word/test03.docx': ['GPL v3.0', 'Apache v2.0'],
  'word/bigfile-01.doc': ['Welcome to BlogCFC, a ColdFusion based blogging application'],
  'word/bigfile-01.docx': ['Welcome to BlogCFC, a ColdFusion based blogging application'],
  'word/test11.doc': ['This is a test for parsing the Word file in node.', '这是一个用来测试nodejs解析Word文档'],
  'pdf/fd_ins_8859.pdf': ['Form 8859', 'District of Columbia'],
  'text/coffee-brewing-guide.md': ['1:16', '60 grams of coffee per litre'],
  'text/release-notes-2026.txt': ['Orbit Analytics release notes, 2026', 'cursor-based pagination'],
  'text/product-catalog.csv': ['sku: CL-101'],
  'word/test01.doc': ['This text has been inserted', '😀'],
  'word/test01.docx': ['This text has been inserted', '😀'],
  'word/bad-xml.docx': ['A second test of reviewing', '😀'],
  'word/test05.doc': ['This is a simple file created with Word 97-SR2.'],
  'pdf/i216_nuclear.pdf': ['福島第一原子力発電所'],
  'pdf/i242_testingWithTable.pdf': ['This is page 1', 'This is page 3'],
  'pdf/i255_emojis.pdf': ['hello', 'world'],
  'pdf/i373_err_broken.pdf': ['Customer reference:'],
};
const UNREADABLE: Record<string, RegExp> = {
  'word/badfile-01-bad-header.doc': /^The Word file is corrupt or not a Word 97-2003 document$/,
  'pdf/i43_err_encrypted.pdf': /^The PDF is password-protected and cannot be read$/,
};

t.test('every fixture is covered by this test', async (t) => {
  const all = ['pdf', 'word', 'text'].flatMap((dir) => readdirSync(fixture(dir)).map((name) => `${dir}/${name}`));
  t.same(all.filter((name) => !(name in EXPECTED_PHRASES) && !(name in UNREADABLE)), []);
});

t.test('readable fixtures yield their phrases and no control characters', async (t) => {
  for (const [name, phrases] of Object.entries(EXPECTED_PHRASES)) {
    const text = await extract(name);
    t.ok(text.trim().length > 0, `${name}: text`);
    t.notMatch(text, CONTROL_CHARACTER, `${name}: no control characters`);
    t.notMatch(text, /\uFFFD/, `${name}: no replacement characters`);
    for (const phrase of phrases) t.ok(text.includes(phrase), `${name}: "${phrase}"`);
  }
});

t.test('CSV records become `column: value` lines, one paragraph per record', async (t) => {
  const text = await extract('text/product-catalog.csv');
  const records = text.split('\n\n');
  t.equal(records.length, 6, 'six products');
  const merino = records.find((record) => record.startsWith('sku: CL-101\n'));
  t.equal(
    merino,
    [
      'sku: CL-101',
      "name: Merino Base Layer, Women's",
      'category: Clothing',
      'price_eur: 69.00',
      'stock: 80',
      'description: 200 g/m2 merino wool, odour resistant, flatlock seams.',
    ].join('\n'),
    'the quoted name keeps its comma',
  );
});

t.test('a PDF split into pages keeps a paragraph break between pages', async (t) => {
  const text = await extract('pdf/i242_testingWithTable.pdf');
  t.match(text, /This is page 1\n\nThis is page 2/);
});

t.test('emoji glyphs that pdf.js turns into NUL leave no trace', async (t) => {
  t.match(await extract('pdf/i255_emojis.pdf'), /^hello world\n/);
});

t.test('unreadable fixtures reject with a readable ExtractionError', async (t) => {
  for (const [name, message] of Object.entries(UNREADABLE)) {
    await rejectsWithExtractionError(t, extract(name), message, name);
    const error = await extract(name).catch((err: unknown) => err);
    t.ok((error as Error).cause instanceof Error, `${name}: library error kept as cause`);
  }
});

t.test('made-up files', async (t) => {
  const dir = t.testdir();
  const write = (name: string, content: string | Uint8Array) => {
    const filePath = path.join(dir, name);
    writeFileSync(filePath, content);
    return filePath;
  };

  t.equal(await extractText(write('bom.md', '\uFEFF# Title\r\n\r\nBody\u0000 text  \r\n'), 'md'), '# Title\n\nBody text', 'BOM, CRLF, NUL and trailing spaces cleaned');
  await rejectsWithExtractionError(t, extractText(write('empty.txt', ''), 'txt'), 'The file contains no text');
  await rejectsWithExtractionError(t, extractText(write('blank.md', ' \n\u0000\n\t\n'), 'md'), 'The file contains no text');
  await rejectsWithExtractionError(t, extractText(write('latin1.txt', Buffer.from('caf\xe9', 'latin1')), 'txt'), 'The file is not valid UTF-8 text');
  await rejectsWithExtractionError(t, extractText(write('header-only.csv', 'sku,name\n'), 'csv'), 'The file contains no text');
  await rejectsWithExtractionError(
    t,
    extractText(write('open-quote.csv', 'sku,name\n1,"never closed\n'), 'csv'),
    /^The CSV file is malformed: Quote Not Closed/,
  );
  t.equal(
    await extractText(write('ragged.csv', 'a,,c\n1,2\n,,\n3,4,5,6\n'), 'csv'),
    'a: 1\ncolumn 2: 2\n\na: 3\ncolumn 2: 4\nc: 5\ncolumn 4: 6',
    'ragged rows, blank header cells and empty records',
  );
  await rejectsWithExtractionError(t, extractText(write('garbage.pdf', '%PDF-1.7\nnot really a PDF'), 'pdf'), /^The PDF is corrupt/);
  // A valid PDF with one empty page: what a scan without OCR looks like to a text extractor.
  const emptyPage =
    '%PDF-1.4\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n2 0 obj <</Type /Pages /Kids [3 0 R] /Count 1>> endobj\n' +
    '3 0 obj <</Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n';
  await rejectsWithExtractionError(t, extractText(write('scan.pdf', emptyPage), 'pdf'), 'The PDF has no text layer (scanned images?)');
  await rejectsWithExtractionError(t, extractText(write('zip.docx', 'PK\u0003\u0004 not a zip'), 'docx'), 'The Word file is corrupt or not a .docx document');
  await rejectsWithExtractionError(t, extractText(write('nothing.doc', 'plain text'), 'doc'), 'The Word file is corrupt or not a Word 97-2003 document');
  await rejectsWithExtractionError(t, extractText(path.join(dir, 'missing.txt'), 'txt'), 'The uploaded file could not be read');
});

t.test('sanitizeText', async (t) => {
  t.equal(sanitizeText('a\r\nb\rc\n'), 'a\nb\nc', 'line ends');
  t.equal(sanitizeText('a\u0000b\u0007c\u001Bd\u007Fe\u0085f\u009Fg'), 'abcdefg', 'C0, DEL and C1 controls dropped');
  t.equal(sanitizeText('col1\tcol2'), 'col1\tcol2', 'tabs kept');
  t.equal(sanitizeText('page 1\fpage 2\vline\u2028next'), 'page 1\npage 2\nline\nnext', 'other breaks become line breaks');
  t.equal(sanitizeText('ok 😀 \uD83D alone \uDE00 alone \uFFFD \uFEFFend'), 'ok 😀  alone  alone  end', 'lone surrogates, U+FFFD and BOM dropped');
  t.equal(sanitizeText('a   \nb\t\n'), 'a\nb', 'trailing whitespace trimmed');
  t.equal(sanitizeText('a\n\n\n\n\n\nb\n\n\nc\n\nd'), 'a\n\n\nb\n\n\nc\n\nd', 'three or more blank lines become two');
  t.equal(sanitizeText('a\n \t \n  \n \n \nb'), 'a\n\n\nb', 'whitespace-only lines count as blank');
  t.equal(sanitizeText('\n\n  text  \n\n'), 'text', 'outer blank space trimmed');
  t.equal(sanitizeText(`x${' '.repeat(200_000)}y`).length, 200_002, 'long space runs are linear');
});

t.test('extractChunksInWorker', async (t) => {
  const docText = await extract('word/test11.doc');
  t.same(
    await extractChunksInWorker(fixture('word/test11.doc'), 'doc', 'test11.doc'),
    chunkText('test11.doc', docText),
    'same chunks as in-process extraction and chunking',
  );
  const pdfChunks = await extractChunksInWorker(fixture('pdf/fd_ins_8859.pdf'), 'pdf', 'form.pdf', { timeoutMs: 30_000 });
  t.ok(pdfChunks.join('\n').includes('District of Columbia'), 'PDF through the worker');
  t.ok(pdfChunks.every((chunk) => chunk.startsWith('[form.pdf]\n')), 'chunks led by the file name');

  const inWorker = (file: string, options?: { timeoutMs?: number; signal?: AbortSignal }) => extractChunksInWorker(fixture(file), extensionOf(file)!, path.basename(file), options);
  await rejectsWithExtractionError(t, inWorker('pdf/i43_err_encrypted.pdf'), 'The PDF is password-protected and cannot be read', 'failure message crosses the thread');
  await rejectsWithExtractionError(t, inWorker('word/badfile-01-bad-header.doc'), /^The Word file is corrupt/);

  // On Linux the budget is the extractor's processing time (a busy machine's wait for the CPU does not count).
  const timedOut = process.platform === 'linux' ? 'Extraction took more than 0.001 s of processing time' : 'Extraction took longer than 0.001 s';
  await rejectsWithExtractionError(t, inWorker('pdf/i216_nuclear.pdf', { timeoutMs: 1 }), timedOut, 'timeout');
  const shutdown = new AbortController();
  const cancelled = extractChunksInWorker(fixture('pdf/i216_nuclear.pdf'), 'pdf', 'i216.pdf', { signal: shutdown.signal });
  shutdown.abort();
  await rejectsWithExtractionError(t, cancelled, 'Extraction cancelled', 'an abort signal cancels it');
  const reused = new AbortController();
  // Each extraction is a child process (slow to start under the test loader): three show a leak.
  for (let i = 0; i < 3; i++) await inWorker('text/release-notes-2026.txt', { signal: reused.signal });
  t.equal(getEventListeners(reused.signal, 'abort').length, 0, 'finished extractions leave no listener on a long-lived signal');
  // Concurrent extractions each get their own worker.
  const results = await Promise.all(['text/release-notes-2026.txt', 'word/test03.docx', 'pdf/i242_testingWithTable.pdf'].map((name) => inWorker(name)));
  const texts = results.map((chunks) => chunks.join('\n'));
  t.ok(texts[0]!.includes('Version 4.3') && texts[1]!.includes('GPL v3.0') && texts[2]!.includes('This is page 3'), 'in parallel');
});
