import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { CsvError, parse as parseCsv } from 'csv-parse/sync';
import mammoth from 'mammoth';
import { getDocumentProxy } from 'unpdf';
import { DEFAULT_MAX_EXTRACTED_TEXT_MB, MAX_INFLATED_FILE_BYTES, MAX_INFLATED_PART_BYTES, MAX_ZIP_ENTRIES } from '../limits.js';
import type { KnowledgeExtension } from './detect.js';
import { chunkText } from './chunk.js';
import { ExtractionError } from './extractor-protocol.js';
import { PdfBombError, checkPdfStreams } from './pdf-guard.js';
import { ZipError, listZipEntries, readZipEntry, writeZip, type ZipWriteEntry } from './zip.js';

// word-extractor ships no type declarations: describe the part used here.
interface WordDocument {
  getBody(): string;
  getFootnotes(): string;
  getEndnotes(): string;
  getTextboxes(options?: { includeHeadersAndFooters?: boolean }): string;
}
type WordExtractorClass = new () => { extract(source: string | Buffer): Promise<WordDocument> };
const WordExtractor = createRequire(import.meta.url)('word-extractor') as WordExtractorClass;

const CONTROL_CHARACTERS = /[\u0000-\u0008\u000E-\u001F\u007F-\u009F]/g;
// Without the `u` flag the class matches UTF-16 code units, so halves of a pair are seen.
const LONE_SURROGATES_AND_NON_CHARACTERS =
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|[\uFFFD\uFEFF]/g;

/**
 * Text as it is stored and chunked: `\n` line ends (vertical tab, form feed and the Unicode
 * line / paragraph separators become line breaks too), no control characters but `\n` and
 * `\t`, no lone surrogates, U+FFFD or stray BOMs, no trailing whitespace on lines, runs of
 * three or more blank lines cut to two, no leading or trailing blank lines.
 */
export function sanitizeText(text: string): string {
  const lines = text
    .replace(/\r\n?/g, '\n')
    .replace(/[\v\f\u2028\u2029]/g, '\n')
    .replace(CONTROL_CHARACTERS, '')
    .replace(LONE_SURROGATES_AND_NON_CHARACTERS, '')
    .split('\n');
  // Line by line rather than with /\s+$/gm or /\n{4,}/g: the first backtracks quadratically
  // on long runs of spaces, the second overflows the stack on millions of newlines.
  const kept: string[] = [];
  let blankRun = 0;
  for (const line of lines) {
    const trimmed = line.trimEnd();
    blankRun = trimmed ? 0 : blankRun + 1;
    if (blankRun <= 2) kept.push(trimmed);
  }
  return kept.join('\n').trim();
}

/** What one file may yield; the defaults are the service's. */
export interface ExtractionLimits {
  /** Most text taken from one file, in UTF-8 bytes (MAX_EXTRACTED_TEXT_MB). */
  maxTextBytes?: number;
}

const DEFAULT_MAX_TEXT_BYTES = DEFAULT_MAX_EXTRACTED_TEXT_MB * 1024 * 1024;
const megabytes = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;

/** The file yields more text than one file may: a readable refusal rather than a huge index. */
export const textTooLarge = (maxTextBytes: number) =>
  new ExtractionError(`The file holds more than ${megabytes(maxTextBytes)} of text, the most taken from one file; split it into smaller files`);

/** Counts text as it is produced, and refuses it past the limit. */
class TextBudget {
  private used = 0;
  constructor(readonly maxBytes: number) {}
  take(text: string): void {
    this.used += Buffer.byteLength(text);
    if (this.used > this.maxBytes) throw textTooLarge(this.maxBytes);
  }
}

/**
 * The sanitized text of a knowledge file whose content already matched `ext`. Every failure,
 * from the file system or a parser, becomes an ExtractionError with a message for the
 * uploader; the original error is kept as `cause` for the logs.
 */
export async function extractText(filePath: string, ext: KnowledgeExtension, limits: ExtractionLimits = {}): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(filePath);
  } catch (err) {
    throw new ExtractionError('The uploaded file could not be read', { cause: err });
  }
  const maxTextBytes = limits.maxTextBytes ?? DEFAULT_MAX_TEXT_BYTES;
  const raw = await EXTRACTORS[ext](bytes, new TextBudget(maxTextBytes));
  // Every extractor counts as it goes where it can; this catches the rest (mammoth, word-extractor).
  if (Buffer.byteLength(raw) > maxTextBytes) throw textTooLarge(maxTextBytes);
  const text = sanitizeText(raw);
  if (!text) {
    throw new ExtractionError(ext === 'pdf' ? 'The PDF has no text layer (scanned images?)' : 'The file contains no text');
  }
  return text;
}

const EXTRACTORS: Record<KnowledgeExtension, (bytes: Buffer, budget: TextBudget) => Promise<string> | string> = {
  txt: decodeUtf8,
  md: decodeUtf8,
  csv: extractCsv,
  pdf: extractPdf,
  docx: extractDocx,
  doc: extractDoc,
};

function decodeUtf8(bytes: Buffer): string {
  try {
    // Strips a leading BOM by default.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (err) {
    throw new ExtractionError('The file is not valid UTF-8 text', { cause: err });
  }
}

/**
 * One record per paragraph, one `column: value` line per non-empty field. Column names are
 * repeated on every record, so a wide header over short records multiplies the text: it is
 * counted as it is built.
 */
function extractCsv(bytes: Buffer, budget: TextBudget): string {
  const text = decodeUtf8(bytes);
  let rows: string[][];
  try {
    // Lenient with the ragged rows and stray quotes of hand-edited spreadsheets.
    rows = parseCsv(text, { relax_column_count: true, relax_quotes: true, skip_empty_lines: true });
  } catch (err) {
    const detail = err instanceof CsvError ? `: ${err.message}` : '';
    throw new ExtractionError(`The CSV file is malformed${detail}`, { cause: err });
  }
  const [header = [], ...records] = rows;
  const columnName = (index: number) => header[index]?.trim() || `column ${index + 1}`;
  const paragraphs: string[] = [];
  for (const record of records) {
    const paragraph = record
      .map((value, index) => (value.trim() ? `${columnName(index)}: ${value.trim()}` : ''))
      .filter(Boolean)
      .join('\n');
    if (!paragraph) continue;
    budget.take(paragraph);
    paragraphs.push(paragraph);
  }
  return paragraphs.join('\n\n');
}

/**
 * The text of each page, in order, one page at a time (pdf.js holds one page's content, not
 * every page's at once), counted against the budget as it comes. Streams are checked first:
 * one that inflates past its limit refuses the file before pdf.js decodes it whole.
 */
async function extractPdf(bytes: Buffer, budget: TextBudget): Promise<string> {
  try {
    await checkPdfStreams(bytes);
  } catch (err) {
    if (err instanceof PdfBombError) throw new ExtractionError(err.message, { cause: err });
    throw err;
  }
  const pages: string[] = [];
  try {
    // pdf.js refuses Node Buffers; a Uint8Array view over the same memory avoids a copy.
    const data = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const pdf = await getDocumentProxy(data, { verbosity: 0 });
    try {
      for (let number = 1; number <= pdf.numPages; number++) {
        const page = await pdf.getPage(number);
        const content = await page.getTextContent();
        // As unpdf's extractText joins a page's items.
        let text = '';
        for (const item of content.items) if ('str' in item && item.str != null) text += item.str + (item.hasEOL ? '\n' : '');
        page.cleanup();
        budget.take(text);
        pages.push(text);
      }
    } finally {
      await pdf.destroy();
    }
  } catch (err) {
    if (err instanceof ExtractionError) throw err;
    throw new ExtractionError(pdfFailureMessage(err), { cause: err });
  }
  return pages.join('\n\n');
}

function pdfFailureMessage(err: unknown): string {
  // pdf.js exceptions carry their kind in `name`, not as exported classes.
  switch (err instanceof Error ? err.name : '') {
    case 'PasswordException':
      return 'The PDF is password-protected and cannot be read';
    case 'InvalidPDFException':
      return 'The PDF is corrupt and cannot be read';
    default:
      return 'The PDF could not be read';
  }
}

async function extractDocx(bytes: Buffer): Promise<string> {
  let bounded: Buffer;
  try {
    bounded = boundedDocx(bytes);
  } catch (err) {
    if (!(err instanceof ZipError)) throw err;
    if (err.overLimit) throw new ExtractionError(`The Word file is too large once decompressed: ${err.message}`, { cause: err });
    throw new ExtractionError('The Word file is corrupt or not a .docx document', { cause: err });
  }
  try {
    return (await mammoth.extractRawText({ buffer: bounded })).value;
  } catch (err) {
    throw new ExtractionError('The Word file is corrupt or not a .docx document', { cause: err });
  }
}

/**
 * The package rewritten with its XML parts inflated under a budget (each part, and all of
 * them together) and stored uncompressed, so mammoth never inflates anything itself: what
 * it reads is what was counted. Other parts (images, embedded objects, fonts) are never read
 * for text and stay as empty entries.
 */
export function boundedDocx(archive: Buffer): Buffer {
  const entries = listZipEntries(archive, MAX_ZIP_ENTRIES);
  let left = MAX_INFLATED_FILE_BYTES;
  const kept: ZipWriteEntry[] = [];
  for (const entry of entries) {
    if (entry.name.endsWith('/')) continue;
    if (!/\.(xml|rels)$/i.test(entry.name)) {
      kept.push({ name: entry.name, data: Buffer.alloc(0) });
      continue;
    }
    const cap = Math.min(MAX_INFLATED_PART_BYTES, left);
    let data: Buffer;
    try {
      data = readZipEntry(archive, entry, cap);
    } catch (err) {
      if (err instanceof ZipError && err.overLimit) {
        throw new ZipError(
          cap < MAX_INFLATED_PART_BYTES
            ? `its parts expand past ${megabytes(MAX_INFLATED_FILE_BYTES)}`
            : `${entry.name} expands past ${megabytes(MAX_INFLATED_PART_BYTES)}`,
          true,
        );
      }
      throw err;
    }
    left -= data.length;
    kept.push({ name: entry.name, data });
  }
  return writeZip(kept);
}

async function extractDoc(bytes: Buffer): Promise<string> {
  let document: WordDocument;
  try {
    document = await new WordExtractor().extract(bytes);
  } catch (err) {
    throw new ExtractionError('The Word file is corrupt or not a Word 97-2003 document', { cause: err });
  }
  // Headers and footers are left out: they hold page furniture (running titles, page
  // numbers), not content worth retrieving.
  return [
    document.getBody(),
    document.getTextboxes({ includeHeadersAndFooters: false }),
    document.getFootnotes(),
    document.getEndnotes(),
  ].join('\n\n');
}

/** The index chunks of a file: its text extracted, then cut into chunks each led by the file's name. */
export async function extractChunks(filePath: string, ext: KnowledgeExtension, fileName: string, limits: ExtractionLimits = {}): Promise<string[]> {
  return chunkText(fileName, await extractText(filePath, ext, limits));
}
