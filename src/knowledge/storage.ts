import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { redactUrl, type Config } from '../config.js';
import { BIDI_CONTROLS, toWellFormed } from '../text/wellformed.js';

/** Storage key of a knowledge file, as the spec's `s3Key`: `<site_id>/knowledge/<id>.<ext>`. */
export const storageKeyFor = (siteId: string, fileId: string, extension: string) => `${siteId}/knowledge/${fileId}.${extension}`;

/** A stored file's store as /ready and the start-up log tell it: never a secret. */
export type StoreDescription =
  | { kind: 'local'; path: string }
  | { kind: 's3'; bucket: string; prefix: string; endpoint: string | null; region: string };

/** The store cannot be used at start-up (a bucket missing, refused or unreachable): one line for the operator. */
export class StoreStartError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StoreStartError';
  }
}

/** The start-up log's line naming the store. */
export function describeStore(store: StoreDescription): string {
  if (store.kind === 'local') return `knowledge files are stored on local disk under ${store.path}`;
  const at = store.endpoint ? ` at ${redactUrl(store.endpoint)}` : '';
  return `knowledge files are stored in S3 bucket "${store.bucket}"${store.prefix ? ` under ${store.prefix}/` : ''}${at} (region ${store.region})`;
}

/** An upload streamed to a local temporary file, not yet stored. */
export interface ReceivedFile {
  tmpPath: string;
  size: number;
}

/**
 * Where knowledge files are kept, keyed by their storage key. An upload is received into a
 * local temporary file first (its type is sniffed and its size counted there), then committed
 * to its key: a stored file is always whole or absent. Local disk is the first implementation,
 * an S3-compatible bucket the second.
 */
export interface ObjectStore {
  readonly description: StoreDescription;
  /** At start-up: clears temporary files a crash left, and checks the store can be used. */
  open(): Promise<void>;
  /** Streams an upload to a local temporary file, counting its bytes; the caller commits or discards it. */
  receive(stream: Readable): Promise<ReceivedFile>;
  /** Writes a received file to its key, whole or not at all; the temporary file is gone once this succeeds. */
  commit(tmpPath: string, storageKey: string): Promise<void>;
  /** Removes a temporary file (one already gone is fine). */
  discard(tmpPath: string): Promise<void>;
  /** Calls `use` with a local path holding the stored file's bytes; a copy made for it is removed after. */
  withLocalFile<T>(storageKey: string, use: (filePath: string) => Promise<T>): Promise<T>;
  exists(storageKey: string): Promise<boolean>;
  /** Removes a stored file; one already gone is fine. */
  remove(storageKey: string): Promise<void>;
  /** Whether the store answers now (/ready). */
  reachable(): Promise<boolean>;
  close(): Promise<void>;
}

/** A folder of temporary files: uploads received, stored files copied out for extraction. */
export class TemporaryFiles {
  constructor(readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
  }

  /** A new path in the folder, for a file to be created there. */
  newPath(): string {
    return path.join(this.dir, randomUUID());
  }

  /** Streams `stream` to a new temporary file, counting its bytes; nothing is left if it fails. */
  async receive(stream: Readable): Promise<ReceivedFile> {
    const tmpPath = this.newPath();
    let size = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        done(null, chunk);
      },
    });
    try {
      await pipeline(stream, counter, fs.createWriteStream(tmpPath, { flags: 'wx' }));
    } catch (error) {
      await this.discard(tmpPath);
      throw error;
    }
    return { tmpPath, size };
  }

  async discard(tmpPath: string): Promise<void> {
    await fs.promises.rm(tmpPath, { force: true });
  }

  /** Temporary files outlive only a crash; nothing else can own them at start-up (one server per DATA_DIR). */
  clear(): void {
    fs.mkdirSync(this.dir, { recursive: true });
    for (const name of fs.readdirSync(this.dir)) fs.rmSync(path.join(this.dir, name), { force: true });
  }
}

/**
 * Files on local disk under DATA_DIR/storage. Uploads are received into storage/.tmp, on the
 * same file system, and renamed into place.
 */
export class FileStorage implements ObjectStore {
  readonly root: string;
  readonly description: StoreDescription;
  private readonly temporary: TemporaryFiles;

  constructor(dataDir: string) {
    this.root = path.join(dataDir, 'storage');
    this.temporary = new TemporaryFiles(path.join(this.root, '.tmp'));
    this.description = { kind: 'local', path: this.root };
  }

  pathOf(storageKey: string): string {
    return path.join(this.root, storageKey);
  }

  async open(): Promise<void> {
    this.temporary.clear();
  }

  receive(stream: Readable): Promise<ReceivedFile> {
    return this.temporary.receive(stream);
  }

  /** Moves a received temporary file to its key's place. */
  async commit(tmpPath: string, storageKey: string): Promise<void> {
    const target = this.pathOf(storageKey);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    await fs.promises.rename(tmpPath, target);
  }

  discard(tmpPath: string): Promise<void> {
    return this.temporary.discard(tmpPath);
  }

  /** The stored file itself: the disk needs no copy. */
  withLocalFile<T>(storageKey: string, use: (filePath: string) => Promise<T>): Promise<T> {
    return use(this.pathOf(storageKey));
  }

  async exists(storageKey: string): Promise<boolean> {
    return fs.promises.access(this.pathOf(storageKey)).then(
      () => true,
      () => false,
    );
  }

  async remove(storageKey: string): Promise<void> {
    await fs.promises.rm(this.pathOf(storageKey), { force: true });
  }

  /** A full disk is told apart (storage: full); the folder itself is always there. */
  async reachable(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}

/** The store STORAGE_URL names (not yet opened); the S3 client is loaded only when one is used. */
export async function createObjectStore(config: Pick<Config, 'dataDir' | 'storage'>): Promise<ObjectStore> {
  if (config.storage.kind === 'local') return new FileStorage(config.dataDir);
  const { S3Storage, temporaryFolderFor } = await import('./s3-storage.js');
  return new S3Storage(config.storage, { tempDir: temporaryFolderFor(config.dataDir) });
}

/** `512 B`, `12.3 KB`, `2.4 MB`: base 1024, one decimal above bytes. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * The client's file name reduced to a safe base name: no directories, no control or
 * reserved characters, no bidi controls (which make "invoice\u202Efdp.exe" show as
 * "invoiceexe.pdf") nor zero-width characters, no leading dots, at most 200 characters
 * (keeping the extension).
 */
export function safeFileName(raw: string, fallbackExtension: string): string {
  const base = raw.split(/[\\/]/).pop() ?? '';
  let name = toWellFormed(base)
    .normalize('NFC')
    .replace(BIDI_CONTROLS, '')
    .replace(/[\u200B\u2060\uFEFF]/g, '')
    .replace(/[\u0000-\u001f\u007f-\u009f<>:"|?*]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^\.+/, '');
  if (name.length > 200) {
    const dot = name.lastIndexOf('.');
    const extension = dot > 0 && name.length - dot <= 10 ? name.slice(dot) : '';
    name = name.slice(0, 200 - extension.length) + extension;
  }
  return name || `file.${fallbackExtension}`;
}
