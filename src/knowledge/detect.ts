import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

export const ACCEPTED_EXTENSIONS = ['txt', 'md', 'pdf', 'doc', 'docx', 'csv'] as const;
export type KnowledgeExtension = (typeof ACCEPTED_EXTENSIONS)[number];

export const MEDIA_TYPES: Record<KnowledgeExtension, string> = {
  txt: 'text/plain',
  md: 'text/markdown',
  pdf: 'application/pdf',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  csv: 'text/csv',
};

const PDF_MAGIC = Buffer.from('%PDF-', 'latin1');
const OLE2_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const ZIP_LOCAL_FILE_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const ZIP_END_OF_CENTRAL_DIRECTORY = Buffer.from([0x50, 0x4b, 0x05, 0x06]);
const ZIP_CENTRAL_DIRECTORY_ENTRY = 0x02014b50;
const ZIP_EOCD_LENGTH = 22;
const ZIP_MAX_COMMENT_LENGTH = 0xffff;
const ZIP_ENTRY_HEADER_LENGTH = 46;
const DOCX_MAIN_PART = 'word/document.xml';

function isKnowledgeExtension(value: string): value is KnowledgeExtension {
  return (ACCEPTED_EXTENSIONS as readonly string[]).includes(value);
}

/**
 * The accepted extension of `fileName`, lower-cased, or null. Only the last extension counts
 * (`report.pdf.txt` is a text file); a leading dot alone (`.md`) is a hidden file, not an
 * extension. Browsers on Windows may send a full path, so directories are dropped first.
 */
export function extensionOf(fileName: string): KnowledgeExtension | null {
  const baseName = fileName.slice(Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\')) + 1);
  const dot = baseName.lastIndexOf('.');
  if (dot <= 0) return null;
  const extension = baseName.slice(dot + 1).toLowerCase();
  return isKnowledgeExtension(extension) ? extension : null;
}

/**
 * Whether the file's bytes are what its extension claims: PDF and Word 97-2003 by their magic
 * numbers, DOCX as a zip whose central directory lists `word/document.xml`, text formats as
 * UTF-8 (BOM allowed) without NUL bytes. Only magic numbers are checked for binary formats: a
 * file that passes can still be corrupt and fail at extraction. Reads at most the zip tail and
 * central directory, or streams text files, so a 10 MiB upload is never held in memory.
 * Rejects only when the file cannot be read at all.
 */
export async function contentMatches(ext: KnowledgeExtension, filePath: string): Promise<boolean> {
  switch (ext) {
    case 'pdf':
      return startsWith(filePath, PDF_MAGIC);
    case 'doc':
      return startsWith(filePath, OLE2_MAGIC);
    case 'docx':
      return isDocxPackage(filePath);
    case 'txt':
    case 'md':
    case 'csv':
      return isUtf8WithoutNul(filePath);
  }
}

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

async function startsWith(filePath: string, magic: Buffer): Promise<boolean> {
  const file = await open(filePath, 'r');
  try {
    return (await readAt(file, 0, magic.length)).equals(magic);
  } finally {
    await file.close();
  }
}

async function isDocxPackage(filePath: string): Promise<boolean> {
  const file = await open(filePath, 'r');
  try {
    if (!(await readAt(file, 0, ZIP_LOCAL_FILE_MAGIC.length)).equals(ZIP_LOCAL_FILE_MAGIC)) return false;
    const { size } = await file.stat();
    // The End Of Central Directory record is the last 22 bytes plus an optional comment.
    const tailLength = Math.min(size, ZIP_EOCD_LENGTH + ZIP_MAX_COMMENT_LENGTH);
    const tail = await readAt(file, size - tailLength, tailLength);
    const eocd = findEndOfCentralDirectory(tail);
    if (eocd < 0) return false;
    const directorySize = tail.readUInt32LE(eocd + 12);
    const directoryOffset = tail.readUInt32LE(eocd + 16);
    // Also rejects ZIP64 archives (offsets 0xFFFFFFFF), which Word never writes for 10 MiB.
    if (directoryOffset + directorySize > size) return false;
    return centralDirectoryLists(await readAt(file, directoryOffset, directorySize), DOCX_MAIN_PART);
  } finally {
    await file.close();
  }
}

/** Offset in `tail` of the last EOCD signature whose record and comment fit in the tail, or -1. */
function findEndOfCentralDirectory(tail: Buffer): number {
  for (let at = tail.lastIndexOf(ZIP_END_OF_CENTRAL_DIRECTORY); at >= 0; ) {
    // A signature inside the comment itself would claim a comment running past the tail.
    if (at + ZIP_EOCD_LENGTH <= tail.length && at + ZIP_EOCD_LENGTH + tail.readUInt16LE(at + 20) <= tail.length) {
      return at;
    }
    at = at > 0 ? tail.lastIndexOf(ZIP_END_OF_CENTRAL_DIRECTORY, at - 1) : -1;
  }
  return -1;
}

function centralDirectoryLists(directory: Buffer, entryName: string): boolean {
  const wanted = Buffer.from(entryName, 'utf8');
  let at = 0;
  while (at + ZIP_ENTRY_HEADER_LENGTH <= directory.length) {
    if (directory.readUInt32LE(at) !== ZIP_CENTRAL_DIRECTORY_ENTRY) return false;
    const nameLength = directory.readUInt16LE(at + 28);
    const extraLength = directory.readUInt16LE(at + 30);
    const commentLength = directory.readUInt16LE(at + 32);
    const nameStart = at + ZIP_ENTRY_HEADER_LENGTH;
    if (directory.subarray(nameStart, nameStart + nameLength).equals(wanted)) return true;
    at = nameStart + nameLength + extraLength + commentLength;
  }
  return false;
}

async function isUtf8WithoutNul(filePath: string): Promise<boolean> {
  // fatal: invalid sequences throw instead of becoming U+FFFD; stream: a character split
  // across two reads is completed by the next one. The BOM is skipped by default.
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for await (const chunk of createReadStream(filePath) as AsyncIterable<Buffer>) {
    if (chunk.includes(0) || !decodes(decoder, chunk, true)) return false;
  }
  // Flushing reports a multi-byte sequence cut off by the end of the file.
  return decodes(decoder, new Uint8Array(0), false);
}

function decodes(decoder: TextDecoder, bytes: Uint8Array, stream: boolean): boolean {
  try {
    decoder.decode(bytes, { stream });
    return true;
  } catch {
    return false;
  }
}
