import zlib from 'node:zlib';

/**
 * Just enough of the zip format to read a DOCX package under a budget of inflated bytes and
 * to write a package back with every entry stored (not compressed). Reading never trusts the
 * sizes an archive declares: an entry is inflated with a cap on its output, so a 200 KB
 * archive claiming small parts cannot expand into gigabytes.
 */

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const EOCD_LENGTH = 22;
const CENTRAL_HEADER_LENGTH = 46;
const LOCAL_HEADER_LENGTH = 30;
const MAX_COMMENT_LENGTH = 0xffff;

export const STORED = 0;
export const DEFLATED = 8;

/** A malformed archive, or one beyond a limit; the message says which. */
export class ZipError extends Error {
  constructor(
    message: string,
    /** True when the archive is refused for exceeding a limit rather than for being malformed. */
    readonly overLimit = false,
  ) {
    super(message);
    this.name = 'ZipError';
  }
}

export interface ZipEntry {
  name: string;
  method: number;
  /** Flag bit 0: encrypted. */
  encrypted: boolean;
  compressedSize: number;
  /** As declared: never trusted for a limit. */
  declaredSize: number;
  /** Offset of the entry's compressed bytes in the archive. */
  dataOffset: number;
}

/** The entries of an archive, from its central directory. */
export function listZipEntries(archive: Buffer, maxEntries: number): ZipEntry[] {
  const tailStart = Math.max(0, archive.length - EOCD_LENGTH - MAX_COMMENT_LENGTH);
  let eocd = -1;
  for (let at = archive.length - EOCD_LENGTH; at >= tailStart; at--) {
    if (archive.readUInt32LE(at) === EOCD_SIGNATURE) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw new ZipError('not a zip archive (no end of central directory)');
  const count = archive.readUInt16LE(eocd + 10);
  const directorySize = archive.readUInt32LE(eocd + 12);
  const directoryOffset = archive.readUInt32LE(eocd + 16);
  if (count === 0xffff || directoryOffset === 0xffffffff) throw new ZipError('ZIP64 archives are not supported');
  if (directoryOffset + directorySize > archive.length) throw new ZipError('the central directory lies outside the archive');
  if (count > maxEntries) throw new ZipError(`the archive has ${count} entries, more than the ${maxEntries} allowed`, true);

  const entries: ZipEntry[] = [];
  let at = directoryOffset;
  for (let i = 0; i < count; i++) {
    if (at + CENTRAL_HEADER_LENGTH > archive.length || archive.readUInt32LE(at) !== CENTRAL_SIGNATURE) {
      throw new ZipError('the central directory is corrupt');
    }
    const flags = archive.readUInt16LE(at + 8);
    const method = archive.readUInt16LE(at + 10);
    const compressedSize = archive.readUInt32LE(at + 20);
    const declaredSize = archive.readUInt32LE(at + 24);
    const nameLength = archive.readUInt16LE(at + 28);
    const extraLength = archive.readUInt16LE(at + 30);
    const commentLength = archive.readUInt16LE(at + 32);
    const localOffset = archive.readUInt32LE(at + 42);
    const name = archive.toString('utf8', at + CENTRAL_HEADER_LENGTH, at + CENTRAL_HEADER_LENGTH + nameLength);
    if (localOffset + LOCAL_HEADER_LENGTH > archive.length || archive.readUInt32LE(localOffset) !== LOCAL_SIGNATURE) {
      throw new ZipError(`the entry ${name} is corrupt`);
    }
    const dataOffset = localOffset + LOCAL_HEADER_LENGTH + archive.readUInt16LE(localOffset + 26) + archive.readUInt16LE(localOffset + 28);
    if (dataOffset + compressedSize > archive.length) throw new ZipError(`the entry ${name} runs past the end of the archive`);
    entries.push({ name, method, encrypted: (flags & 1) === 1, compressedSize, declaredSize, dataOffset });
    at += CENTRAL_HEADER_LENGTH + nameLength + extraLength + commentLength;
  }
  return entries;
}

/**
 * The entry's bytes, inflating at most `maxBytes`: past that it throws a ZipError with
 * `overLimit`, having never held more than `maxBytes` of output.
 */
export function readZipEntry(archive: Buffer, entry: ZipEntry, maxBytes: number): Buffer {
  if (entry.encrypted) throw new ZipError(`the entry ${entry.name} is encrypted`);
  const data = archive.subarray(entry.dataOffset, entry.dataOffset + entry.compressedSize);
  if (entry.method === STORED) {
    if (data.length > maxBytes) throw new ZipError(`the entry ${entry.name} holds more than ${maxBytes} bytes`, true);
    return data;
  }
  if (entry.method !== DEFLATED) throw new ZipError(`the entry ${entry.name} uses an unsupported compression method (${entry.method})`);
  try {
    // maxOutputLength stops zlib as soon as its output would pass the cap.
    return zlib.inflateRawSync(data, { maxOutputLength: Math.max(1, maxBytes) });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE') throw new ZipError(`the entry ${entry.name} inflates to more than ${maxBytes} bytes`, true);
    // zlib's own errors (Z_DATA_ERROR, Z_BUF_ERROR, ...) mean bad data; anything else (out of memory) is not the archive's fault.
    if (code?.startsWith('Z_')) throw new ZipError(`the entry ${entry.name} is corrupt (${(err as Error).message})`);
    throw err;
  }
}

export interface ZipWriteEntry {
  name: string;
  /** The entry's bytes as they go into the archive (already deflated when `method` is DEFLATED). */
  data: Buffer;
  method?: typeof STORED | typeof DEFLATED;
  /** For a deflated entry: its inflated size and CRC (what the headers declare). */
  size?: number;
  crc?: number;
}

/** An archive of the given entries (stored unless told otherwise). */
export function writeZip(entries: readonly ZipWriteEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const method = entry.method ?? STORED;
    const size = entry.size ?? entry.data.length;
    const crc = entry.crc ?? (method === STORED ? zlib.crc32(entry.data) : 0);
    const local = Buffer.alloc(LOCAL_HEADER_LENGTH);
    local.writeUInt32LE(LOCAL_SIGNATURE, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(entry.data.length, 18);
    local.writeUInt32LE(size >>> 0, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(CENTRAL_HEADER_LENGTH);
    central.writeUInt32LE(CENTRAL_SIGNATURE, 0);
    central.writeUInt16LE(20, 4); // version made by
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(entry.data.length, 20);
    central.writeUInt32LE(size >>> 0, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, entry.data);
    centrals.push(central, name);
    offset += local.length + name.length + entry.data.length;
  }
  const directorySize = centrals.reduce((sum, b) => sum + b.length, 0);
  const eocd = Buffer.alloc(EOCD_LENGTH);
  eocd.writeUInt32LE(EOCD_SIGNATURE, 0);
  eocd.writeUInt16LE(entries.length, 8);
  eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(directorySize, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, eocd]);
}
