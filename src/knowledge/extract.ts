import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { CsvError, parse as parseCsv } from 'csv-parse/sync';
import mammoth from 'mammoth';
import { extractText as extractPdfText, getDocumentProxy } from 'unpdf';
import type { KnowledgeExtension } from './detect.js';
import { chunkText } from './chunk.js';

/** Extraction failed for a reason the uploader can act on; the message is shown to them. */
export class ExtractionError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ExtractionError';
  }
}

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
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[\v\f\u2028\u2029]/g, '\n')
    .replace(CONTROL_CHARACTERS, '')
    .replace(LONE_SURROGATES_AND_NON_CHARACTERS, '')
    .split('\n')
    // trimEnd per line rather than /\s+$/gm, which backtracks quadratically on long space runs.
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{4,}/g, '\n\n\n')
    .trim();
}

/**
 * The sanitized text of a knowledge file whose content already matched `ext`. Every failure,
 * from the file system or a parser, becomes an ExtractionError with a message for the
 * uploader; the original error is kept as `cause` for the logs.
 */
export async function extractText(filePath: string, ext: KnowledgeExtension): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(filePath);
  } catch (err) {
    throw new ExtractionError('The uploaded file could not be read', { cause: err });
  }
  const text = sanitizeText(await EXTRACTORS[ext](bytes));
  if (!text) {
    throw new ExtractionError(ext === 'pdf' ? 'The PDF has no text layer (scanned images?)' : 'The file contains no text');
  }
  return text;
}

const EXTRACTORS: Record<KnowledgeExtension, (bytes: Buffer) => Promise<string> | string> = {
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

/** One record per paragraph, one `column: value` line per non-empty field. */
function extractCsv(bytes: Buffer): string {
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
  return records
    .map((record) =>
      record
        .map((value, index) => (value.trim() ? `${columnName(index)}: ${value.trim()}` : ''))
        .filter(Boolean)
        .join('\n'),
    )
    .filter(Boolean)
    .join('\n\n');
}

async function extractPdf(bytes: Buffer): Promise<string> {
  try {
    // pdf.js refuses Node Buffers; a Uint8Array view over the same memory avoids a copy.
    const data = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const pdf = await getDocumentProxy(data, { verbosity: 0 });
    try {
      const { text: pages } = await extractPdfText(pdf, { mergePages: false });
      return pages.join('\n\n');
    } finally {
      await pdf.destroy();
    }
  } catch (err) {
    throw new ExtractionError(pdfFailureMessage(err), { cause: err });
  }
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
  try {
    return (await mammoth.extractRawText({ buffer: bytes })).value;
  } catch (err) {
    throw new ExtractionError('The Word file is corrupt or not a .docx document', { cause: err });
  }
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
export async function extractChunks(filePath: string, ext: KnowledgeExtension, fileName: string): Promise<string[]> {
  return chunkText(fileName, await extractText(filePath, ext));
}
