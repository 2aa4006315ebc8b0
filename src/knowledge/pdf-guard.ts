import zlib from 'node:zlib';
import { MAX_INFLATED_FILE_BYTES, MAX_INFLATED_IMAGE_BYTES, MAX_INFLATED_PART_BYTES } from '../limits.js';

/** A PDF whose streams inflate past a limit: refused before pdf.js decodes them whole. */
export class PdfBombError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PdfBombError';
  }
}

export interface PdfStreamLimits {
  /** Most one stream that text extraction reads (content, forms, fonts, object streams) may inflate to. */
  maxStreamBytes?: number;
  /** Most all of those together may inflate to. */
  maxTotalBytes?: number;
  /** Most one image or attached file may inflate to (text extraction never decodes them, but a content stream can claim to be one). */
  maxImageBytes?: number;
}

const STREAM = Buffer.from('stream', 'latin1');
const megabytes = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;

/**
 * Inflates every FlateDecode stream of a PDF once, counting and discarding its output, and
 * throws a PdfBombError as soon as one passes its limit: pdf.js keeps a decoded stream whole
 * in memory (a 2 GiB content stream took it to 4.3 GB), so the check comes first.
 *
 * Streams are found by their `stream` keyword rather than through the cross-reference table,
 * so a broken or lying table hides none of them; zlib itself finds where each one ends.
 * Streams whose data is not zlib (images in DCT, other filters) are not checked here: those
 * and filter chains (ASCII85 around Flate, LZW) are bounded by the extractor's memory limit.
 */
export async function checkPdfStreams(pdf: Buffer, limits: PdfStreamLimits = {}): Promise<void> {
  const maxStream = limits.maxStreamBytes ?? MAX_INFLATED_PART_BYTES;
  const maxTotal = limits.maxTotalBytes ?? MAX_INFLATED_FILE_BYTES;
  const maxImage = limits.maxImageBytes ?? MAX_INFLATED_IMAGE_BYTES;
  let total = 0;
  for (let at = pdf.indexOf(STREAM); at >= 0; at = pdf.indexOf(STREAM, at + STREAM.length)) {
    if (at >= 3 && pdf.toString('latin1', at - 3, at) === 'end') continue;
    // The keyword is followed by CRLF or LF (a lone CR is tolerated, as pdf.js does).
    let start = at + STREAM.length;
    if (pdf[start] === 0x0d) start++;
    if (pdf[start] === 0x0a) start++;
    if (start === at + STREAM.length || !isZlibHeader(pdf, start)) continue;
    // Images and attached files are never decoded for text: they get their own, larger limit.
    const image = /\/Subtype\s*\/Image\b|\/Type\s*\/EmbeddedFile\b/.test(dictionaryBefore(pdf, at));
    const cap = image ? maxImage : Math.min(maxStream, maxTotal - total);
    const { size, over } = await inflatedSize(pdf.subarray(start), cap);
    if (over) {
      if (image) throw new PdfBombError(`The PDF is too large once decompressed: an image expands past ${megabytes(maxImage)}`);
      if (cap < maxStream) throw new PdfBombError(`The PDF is too large once decompressed: its streams expand past ${megabytes(maxTotal)}`);
      throw new PdfBombError(`The PDF is too large once decompressed: a stream expands past ${megabytes(maxStream)}`);
    }
    if (!image) total += size;
  }
}

/** A zlib header: deflate method, a window of at most 32 KiB, and the header checksum. */
function isZlibHeader(bytes: Buffer, at: number): boolean {
  if (at + 2 > bytes.length) return false;
  const cmf = bytes[at];
  const flg = bytes[at + 1];
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

/** The text of the object holding the stream that starts at `at`, from its `obj` keyword (at most 4 KB back). */
function dictionaryBefore(pdf: Buffer, at: number): string {
  const head = pdf.toString('latin1', Math.max(0, at - 4096), at);
  const obj = head.lastIndexOf('obj');
  return obj >= 0 ? head.slice(obj) : head;
}

/**
 * How many bytes `data` inflates to, stopping as soon as it passes `cap` (`over`). Output is
 * counted and dropped; a corrupt or truncated stream counts what it yielded before failing
 * (pdf.js keeps that much too), and zlib stops by itself at the end of the deflate data.
 */
function inflatedSize(data: Buffer, cap: number): Promise<{ size: number; over: boolean }> {
  return new Promise((resolve) => {
    const inflate = zlib.createInflate({ finishFlush: zlib.constants.Z_SYNC_FLUSH, chunkSize: 64 * 1024 });
    let size = 0;
    let settled = false;
    const finish = (over: boolean) => {
      if (settled) return;
      settled = true;
      inflate.destroy();
      resolve({ size, over });
    };
    inflate.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > cap) finish(true);
    });
    inflate.on('end', () => finish(false));
    inflate.on('error', () => finish(false));
    inflate.end(data);
  });
}
