import zlib from 'node:zlib';
import { DEFLATED, writeZip, type ZipWriteEntry } from '../../src/knowledge/zip.js';

/**
 * Hostile files, built at test time (small on disk, huge once inflated): decompression bombs
 * in DOCX and PDF form.
 */

/**
 * Raw deflate data for `head + body × repeats + tail`, built without ever holding the inflated
 * bytes: each part is compressed on its own with a full flush (byte-aligned, no shared
 * dictionary), so copies of the body's compressed form can simply be concatenated.
 */
export function deflateRepeated(head: string, body: string, repeats: number, tail: string): { data: Buffer; size: number } {
  const part = (text: string) => zlib.deflateRawSync(Buffer.from(text), { finishFlush: zlib.constants.Z_FULL_FLUSH });
  // Bodies of ~1 MiB compress about 1000:1.
  const bodyBytes = Buffer.byteLength(body);
  const perBlock = Math.max(1, Math.floor((1 << 20) / bodyBytes));
  const fullBlocks = Math.floor(repeats / perBlock);
  const block = part(body.repeat(perBlock));
  const pieces = [part(head)];
  for (let i = 0; i < fullBlocks; i++) pieces.push(block);
  const rest = repeats - fullBlocks * perBlock;
  if (rest > 0) pieces.push(part(body.repeat(rest)));
  pieces.push(zlib.deflateRawSync(Buffer.from(tail)));
  return { data: Buffer.concat(pieces), size: Buffer.byteLength(head) + bodyBytes * repeats + Buffer.byteLength(tail) };
}

const CONTENT_TYPES =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
  '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
const ROOT_RELS =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';
const DOCUMENT_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>';
const DOCUMENT_TAIL = '</w:body></w:document>';

/** A paragraph of `text` in WordprocessingML. */
export const docxParagraph = (text: string) => `<w:p><w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;

/**
 * A DOCX whose document.xml is `paragraph` repeated `repeats` times, deflated. `extra` adds
 * more entries (say, a bomb in a part the text never needs).
 */
export function docxOf(paragraph: string, repeats: number, extra: ZipWriteEntry[] = []): { docx: Buffer; documentBytes: number } {
  const document = deflateRepeated(DOCUMENT_HEAD, paragraph, repeats, DOCUMENT_TAIL);
  const docx = writeZip([
    { name: '[Content_Types].xml', data: Buffer.from(CONTENT_TYPES) },
    { name: '_rels/.rels', data: Buffer.from(ROOT_RELS) },
    { name: 'word/document.xml', data: document.data, method: DEFLATED, size: document.size },
    ...extra,
  ]);
  return { docx, documentBytes: document.size };
}

/** A deflated entry of `bytes` zero bytes. */
export function zeroBombEntry(name: string, bytes: number): ZipWriteEntry {
  const body = '\0'.repeat(1 << 16);
  const repeats = Math.ceil(bytes / body.length);
  const { data, size } = deflateRepeated('', body, repeats, '');
  return { name, data, method: DEFLATED, size };
}

/**
 * A one-page PDF whose content stream (FlateDecode) inflates to `streamBytes`: a text
 * object repeated, so what it shows is text all the way.
 */
export function pdfWithContentStream(body: string, repeats: number): { pdf: Buffer; streamBytes: number } {
  const raw = deflateRepeated('', body, repeats, '');
  // zlib format: a 2-byte header, the raw deflate data, an Adler-32 left zero (pdf.js does not check it).
  const data = Buffer.concat([Buffer.from([0x78, 0x9c]), raw.data, Buffer.alloc(4)]);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    null,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  const chunks: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  const offsets: number[] = [];
  let length = chunks[0].length;
  objects.forEach((body, index) => {
    offsets.push(length);
    const piece =
      body === null
        ? Buffer.concat([Buffer.from(`${index + 1} 0 obj\n<< /Length ${data.length} /Filter /FlateDecode >>\nstream\n`), data, Buffer.from('\nendstream\nendobj\n')])
        : Buffer.from(`${index + 1} 0 obj\n${body}\nendobj\n`);
    chunks.push(piece);
    length += piece.length;
  });
  const xref = [`xref\n0 ${objects.length + 1}\n`, '0000000000 65535 f \n', ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)].join('');
  chunks.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`));
  return { pdf: Buffer.concat(chunks), streamBytes: raw.size };
}
