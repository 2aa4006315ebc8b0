import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { redactUrl, type Config } from '../config.js';
import { TemporaryFiles, type ObjectStore, type ReceivedFile, type StoreDescription } from './object-store.js';
import { BIDI_CONTROLS, toWellFormed } from '../text/wellformed.js';

export { StoreStartError, TemporaryFiles, type ObjectStore, type ReceivedFile, type StoreDescription } from './object-store.js';

/** Storage key of a knowledge file, as the spec's `s3Key`: `<site_id>/knowledge/<id>.<ext>`. */
export const storageKeyFor = (siteId: string, fileId: string, extension: string) => `${siteId}/knowledge/${fileId}.${extension}`;

/** The start-up log's line naming the store. */
export function describeStore(store: StoreDescription): string {
  if (store.kind === 'local') return `knowledge files are stored on local disk under ${store.path}`;
  const at = store.endpoint ? ` at ${redactUrl(store.endpoint)}` : '';
  return `knowledge files are stored in S3 bucket "${store.bucket}"${store.prefix ? ` under ${store.prefix}/` : ''}${at} (region ${store.region})`;
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

  newTemporaryPath(): string {
    return this.temporary.newPath();
  }

  async read(storageKey: string): Promise<{ stream: Readable; size: number } | null> {
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(this.pathOf(storageKey), 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    const { size } = await handle.stat();
    return { stream: handle.createReadStream(), size };
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
