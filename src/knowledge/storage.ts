import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BIDI_CONTROLS, toWellFormed } from '../text/wellformed.js';

/** Storage key of a knowledge file, as the spec's `s3Key`: `<site_id>/knowledge/<id>.<ext>`. */
export const storageKeyFor = (siteId: string, fileId: string, extension: string) => `${siteId}/knowledge/${fileId}.${extension}`;

/**
 * Files on local disk under DATA_DIR/storage, keyed like an object store. Uploads are written
 * to storage/.tmp first and renamed into place, so a stored file is always whole or absent.
 */
export class FileStorage {
  readonly root: string;
  private readonly tmpDir: string;

  constructor(dataDir: string) {
    this.root = path.join(dataDir, 'storage');
    this.tmpDir = path.join(this.root, '.tmp');
    fs.mkdirSync(this.tmpDir, { recursive: true });
  }

  pathOf(storageKey: string): string {
    return path.join(this.root, storageKey);
  }

  /** Streams an upload to a temporary file, counting its bytes; the caller commits or discards it. */
  async receive(stream: Readable): Promise<{ tmpPath: string; size: number }> {
    const tmpPath = path.join(this.tmpDir, randomUUID());
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

  /** Moves a received temporary file to its key's place. */
  async commit(tmpPath: string, storageKey: string): Promise<void> {
    const target = this.pathOf(storageKey);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    await fs.promises.rename(tmpPath, target);
  }

  async discard(tmpPath: string): Promise<void> {
    await fs.promises.rm(tmpPath, { force: true });
  }

  async remove(storageKey: string): Promise<void> {
    await fs.promises.rm(this.pathOf(storageKey), { force: true });
  }

  /** Temporary files outlive only a crash mid-upload; nothing else can own them at start-up. */
  clearTemporaryFiles(): void {
    for (const name of fs.readdirSync(this.tmpDir)) fs.rmSync(path.join(this.tmpDir, name), { force: true });
  }
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
