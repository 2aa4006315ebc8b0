/**
 * Hostile files against the extractor: decompression bombs in DOCX and PDF, text that expands
 * past MAX_EXTRACTED_TEXT_MB, millions of newlines. Every hostile file is built here, at test time.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { extractText, sanitizeText } from '../../src/knowledge/extract.js';
import { runExtractor } from '../../src/knowledge/extract-runner.js';
import { MAX_INFLATED_PART_BYTES } from '../../src/limits.js';
import { buildTestApp } from '../helpers/app.js';
import { docxOf, docxParagraph, pdfWithContentStream, zeroBombEntry } from '../helpers/hostile.js';
import { multipart } from '../helpers/multipart.js';
import { DEFLATED, type ZipWriteEntry } from '../../src/knowledge/zip.js';
import { deflateRepeated } from '../helpers/hostile.js';
import { knowledgeRows } from '../helpers/knowledge-rows.js';

const MiB = 1024 * 1024;
const TEXT_OP = 'BT /F1 12 Tf 72 720 Td (The quick brown fox jumps over the lazy dog) Tj ET\n';

function writeTemp(dir: string, name: string, bytes: Buffer | string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
}

t.test('a DOCX whose document.xml inflates past the part limit is refused, early and small', async (t) => {
  const dir = t.testdir();
  // ~1 MB on disk, 256 MiB of XML once inflated (the issue's 261 KB file was 268 MB of text).
  const { docx, documentBytes } = docxOf(docxParagraph('word '.repeat(8)), Math.floor((256 * MiB) / 80));
  t.ok(docx.length < 2 * MiB && documentBytes > 8 * MAX_INFLATED_PART_BYTES, `${docx.length} bytes inflating to ${documentBytes}`);
  const error = (await runExtractor(writeTemp(dir, 'bomb.docx', docx), 'docx', 'bomb.docx').catch((err: unknown) => err)) as Error & { peakMemoryMb?: number };
  t.match(error.message, /^The Word file is too large once decompressed: word\/document\.xml expands past 32 MB$/);
  t.ok(error.peakMemoryMb! < 400, `extractor peak ${error.peakMemoryMb} MB`);
});

t.test('DOCX parts inflating past the file budget together are refused; parts never read for text are not inflated', async (t) => {
  const dir = t.testdir();
  const part = (name: string): ZipWriteEntry => {
    const { data, size } = deflateRepeated('<x>', '<y>filler filler</y>', Math.floor((30 * MiB) / 20), '</x>');
    return { name, data, method: DEFLATED, size };
  };
  const many = docxOf(docxParagraph('hello'), 1, [1, 2, 3, 4, 5].map((i) => part(`customXml/item${i}.xml`))).docx;
  await t.rejects(extractText(writeTemp(dir, 'many.docx', many), 'docx'), { message: 'The Word file is too large once decompressed: its parts expand past 128 MB' });

  // A 4 GiB "image": never needed for text, never inflated.
  const media = docxOf(docxParagraph('Visible words of a document with a huge picture'), 3, [zeroBombEntry('word/media/image1.png', 4096 * MiB)]).docx;
  const before = process.resourceUsage().maxRSS;
  const text = await extractText(writeTemp(dir, 'media.docx', media), 'docx');
  t.match(text, /Visible words of a document with a huge picture/);
  t.ok(process.resourceUsage().maxRSS - before < 512 * 1024, 'the image is skipped, not inflated');
});

t.test('a PDF whose content stream inflates past the stream limit is refused before pdf.js decodes it', async (t) => {
  const dir = t.testdir();
  const { pdf, streamBytes } = pdfWithContentStream(TEXT_OP, Math.floor((256 * MiB) / TEXT_OP.length));
  t.ok(pdf.length < 2 * MiB, `${pdf.length} bytes inflating to ${streamBytes}`);
  const error = (await runExtractor(writeTemp(dir, 'bomb.pdf', pdf), 'pdf', 'bomb.pdf').catch((err: unknown) => err)) as Error & { peakMemoryMb?: number };
  t.equal(error.message, 'The PDF is too large once decompressed: a stream expands past 32 MB');
  t.ok(error.peakMemoryMb! < 400, `extractor peak ${error.peakMemoryMb} MB`);
});

t.test('text past MAX_EXTRACTED_TEXT_MB fails the file with a readable error and indexes nothing', async (t) => {
  const ctx = await buildTestApp(t, { MAX_EXTRACTED_TEXT_MB: '1' });
  // 105 KB of CSV: a wide header repeated on every record expands it to ~1.6 MB of text.
  const header = Array.from({ length: 200 }, (_, i) => `a_rather_long_column_name_${i}`).join(',');
  const csv = `${header}\n${`${Array(200).fill('x').join(',')}\n`.repeat(250)}`;
  const pdf = pdfWithContentStream(TEXT_OP, 40_000).pdf; // ~1.7 MB of text over one page
  for (const [name, content] of [['wide.csv', csv], ['long.pdf', pdf]] as const) {
    const form = multipart([{ name: 'file', filename: name, content }]);
    const res = await ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers });
    t.equal(res.statusCode, 201, name);
    await ctx.app.indexer.whenIdle();
    const item = (await ctx.call({ method: 'GET', url: `/api/v1/knowledge/${res.json().data.knowledge.id}` })).json().data.knowledge;
    t.equal(item.status, 'failed', `${name}: failed`);
    t.equal(item.error, 'The file holds more than 1 MB of text, the most taken from one file; split it into smaller files', `${name}: says why`);
    t.equal(item.chunkCount, 0);
  }
  t.same(await knowledgeRows(ctx.app).chunkTexts(), [], 'no chunks stored');

  // Under the limit, the same kind of file is indexed.
  const small = multipart([{ name: 'file', filename: 'small.csv', content: `${header}\n${Array(200).fill('y').join(',')}\n` }]);
  const ok = await ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: small.payload, headers: small.headers });
  await ctx.app.indexer.whenIdle();
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/knowledge/${ok.json().data.knowledge.id}` })).json().data.knowledge.status, 'indexed');
});

t.test('9 MiB of newlines is sanitized without overflowing the stack', async (t) => {
  const text = `first${'\n'.repeat(9 * MiB)}last`;
  t.equal(sanitizeText(text), 'first\n\n\nlast');
  t.equal(sanitizeText(`a${'\r\n'.repeat(3 * MiB)}b${' \n'.repeat(3 * MiB)}c`), 'a\n\n\nb\n\n\nc');
});

