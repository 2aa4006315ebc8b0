import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { MediaRow } from '../db/schema.js';
import { AppError, notFound, validationError } from '../errors.js';
import { MAX_ALT_LENGTH, MAX_IMAGE_BYTES, type ImageVariant } from '../limits.js';
import type { ObjectStore } from '../knowledge/object-store.js';
import { safeFileName } from '../knowledge/storage.js';
import { quotaRefusal, type SiteStorageUsage } from '../knowledge/usage.js';
import { paginationOf, type Page } from '../pagination.js';
import { receiveOneFile, type UploadPart } from '../uploads.js';
import type { Readable } from 'node:stream';
import { EXTENSION_OF, SNIFF_BYTES, sniffImage, formatOfFile, MEDIA_TYPE_OF } from './detect.js';
import { FairQueue } from './fair-queue.js';
import { unknownImage } from './rules.js';
import { processImage, type ImageOutput, type ProcessedImage } from './images.js';
import type { MediaStore } from './store.js';
import { mediaKey } from './view.js';


/** A stored file's name as the public route takes it: what this service writes, nothing else. */
const STORED_FILE = /^[a-z0-9-]{1,80}\.(jpg|png|webp|gif|avif)$/;
const MEDIA_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const ACCEPTED = 'JPEG, PNG, WebP, GIF or AVIF';

export const unsupportedImage = (why: string) =>
  new AppError(415, 'UNSUPPORTED_FILE_TYPE', `${why}. Accepted images: ${ACCEPTED}`, { accepted: ['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif'] });

export const imageFileTooLarge = () => new AppError(413, 'FILE_TOO_LARGE', `The image is larger than the 20 MiB limit (${MAX_IMAGE_BYTES} bytes)`);

/** The uploader's name for the image, as a slug for its stored files (`sunset-at-sea`). */
function baseName(filename: string): string {
  const name = safeFileName(filename, 'img').replace(/\.[^.]*$/, '');
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 60)
    .replace(/^-+|-+$/g, '');
  return slug || 'image';
}

async function readHead(file: string): Promise<Buffer> {
  const handle = await fs.promises.open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(SNIFF_BYTES), 0, SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

async function hashOf(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex').slice(0, 12);
}

export interface MediaServiceOptions {
  /** What a site's stored files may take (SITE_STORAGE_QUOTA_MB), knowledge files and images together; no limit without. */
  quotaBytes?: number;
  usage?: Pick<SiteStorageUsage, 'usage'>;
  /** Images processed at once, over all sites (one per site at a time). */
  concurrency?: number;
}

/**
 * Each site's media library: images uploaded, processed (upright, stripped of metadata, resized
 * into variants), stored through the object store under `<site_id>/media/<id>/` and recorded.
 * A refused or failed upload leaves nothing stored nor recorded.
 */
export class MediaService {
  private readonly queue: FairQueue;

  constructor(
    private readonly store: MediaStore,
    private readonly storage: ObjectStore,
    private readonly options: MediaServiceOptions = {},
  ) {
    this.queue = new FairQueue(options.concurrency ?? 1);
  }

  /** Images being processed or waiting to be (the bench). */
  get processing(): number {
    return this.queue.size;
  }

  private async checkQuota(siteId: string, incomingBytes: number): Promise<void> {
    const { quotaBytes, usage } = this.options;
    if (quotaBytes === undefined || !usage) return;
    const refusal = quotaRefusal(await usage.usage(siteId), quotaBytes, incomingBytes);
    if (refusal) throw refusal;
  }

  /** Takes the one file part of a multipart upload, processes the image and stores it. */
  async upload(siteId: string, parts: AsyncIterable<UploadPart>, now = new Date()): Promise<MediaRow> {
    const received = await receiveOneFile(parts, {
      noun: 'image',
      admit: () => this.checkQuota(siteId, 0),
      receive: (part) => this.receive(part.filename ?? '', part.file),
      // The stored files' size is known once processed: the quota is checked then.
      check: async () => {},
      discard: (upload) => this.storage.discard(upload.tmpPath),
    });
    try {
      return await this.queue.run(siteId, () => this.processAndStore(siteId, received.tmpPath, received.filename, now));
    } finally {
      await this.storage.discard(received.tmpPath);
    }
  }

  private async receive(filename: string, stream: Readable & { truncated?: boolean }): Promise<{ tmpPath: string; filename: string }> {
    const { tmpPath, size } = await this.storage.receive(stream);
    if (stream.truncated || size > MAX_IMAGE_BYTES || size === 0) {
      await this.storage.discard(tmpPath);
      if (size === 0) throw validationError('The file is empty', [{ path: '/body/file', message: 'must not be empty' }]);
      throw imageFileTooLarge();
    }
    return { tmpPath, filename };
  }

  private async processAndStore(siteId: string, tmpPath: string, filename: string, now: Date): Promise<MediaRow> {
    const format = sniffImage(await readHead(tmpPath));
    if (format === 'svg') throw unsupportedImage('SVG images are not accepted (an SVG file can carry script)');
    if (format === null) throw unsupportedImage('The file is not an image of an accepted format');

    const outputs: string[] = [];
    const output = () => {
      const path = this.storage.newTemporaryPath();
      outputs.push(path);
      return path;
    };
    try {
      const processed = await processImage(tmpPath, format, output);
      const files = [processed.original, ...processed.variants];
      const sizeBytes = files.reduce((sum, file) => sum + file.sizeBytes, 0);
      await this.checkQuota(siteId, sizeBytes);
      const id = randomUUID();
      const row = this.rowOf(siteId, id, `${baseName(filename)}-${await hashOf(tmpPath)}`, filename, processed, sizeBytes, now);
      await this.commit(siteId, id, row, processed);
      return row;
    } finally {
      await Promise.all(outputs.map((path) => this.storage.discard(path)));
    }
  }

  private rowOf(siteId: string, id: string, stem: string, filename: string, processed: ProcessedImage, sizeBytes: number, now: Date): MediaRow {
    const variantFile = (output: ImageOutput) => `${stem}-${output.width}.${EXTENSION_OF[output.format]}`;
    const variants: ImageVariant[] = processed.variants.map((output) => ({
      file: variantFile(output),
      format: output.format,
      width: output.width,
      height: output.height,
      sizeBytes: output.sizeBytes,
    }));
    const { original } = processed;
    return {
      id,
      siteId,
      file: `${stem}.${EXTENSION_OF[original.format]}`,
      name: safeFileName(filename, EXTENSION_OF[original.format]),
      format: original.format,
      width: original.width,
      height: original.height,
      alt: '',
      sizeBytes,
      variants,
      createdAt: now,
    };
  }

  /** Stores every file, then records the row; anything that fails takes back what was stored. */
  private async commit(siteId: string, id: string, row: MediaRow, processed: ProcessedImage): Promise<void> {
    const files: [ImageOutput, string][] = [[processed.original, row.file], ...processed.variants.map((output, i): [ImageOutput, string] => [output, row.variants[i]!.file])];
    const stored: string[] = [];
    try {
      for (const [output, file] of files) {
        const key = mediaKey(siteId, id, file);
        await this.storage.commit(output.path, key);
        stored.push(key);
      }
      await this.store.insert(row);
    } catch (error) {
      await Promise.all(stored.map((key) => this.storage.remove(key).catch(() => {})));
      throw error;
    }
  }

  async get(siteId: string, id: string): Promise<MediaRow> {
    const row = MEDIA_ID.test(id) ? await this.store.get(siteId, id) : undefined;
    if (!row) throw notFound('Image');
    return row;
  }

  /** Which of these ids are images of the site. */
  async existingIds(siteId: string, ids: readonly string[]): Promise<Set<string>> {
    const valid = ids.filter((id) => MEDIA_ID.test(id));
    return new Set(valid.length === 0 ? [] : (await this.store.byIds(siteId, valid)).map((row) => row.id));
  }

  /** 400 naming `path` unless `mediaId` is an image of the site. */
  async checkFeatureImage(siteId: string, mediaId: string, path: string): Promise<void> {
    if (!(await this.existingIds(siteId, [mediaId])).has(mediaId)) throw unknownImage(mediaId, path);
  }

  async list(siteId: string, page: number, limit: number): Promise<Page<MediaRow>> {
    const { rows, total } = await this.store.page(siteId, limit, (page - 1) * limit);
    return { items: rows, pagination: paginationOf(page, limit, total) };
  }

  async setAlt(siteId: string, id: string, alt: string): Promise<MediaRow> {
    const text = alt.trim();
    if (text.length > MAX_ALT_LENGTH) throw validationError(`alt must be at most ${MAX_ALT_LENGTH} characters`, [{ path: '/body/alt', message: `must be at most ${MAX_ALT_LENGTH} characters` }]);
    const row = MEDIA_ID.test(id) ? await this.store.setAlt(siteId, id, text) : undefined;
    if (!row) throw notFound('Image');
    return row;
  }

  /**
   * Deletes the image: its row first (posts showing it lose their feature image in the same
   * transaction), then its stored files; a file the store fails to remove stays as an orphan,
   * counted nowhere.
   */
  async delete(siteId: string, id: string): Promise<MediaRow> {
    const row = MEDIA_ID.test(id) ? await this.store.remove(siteId, id) : undefined;
    if (!row) throw notFound('Image');
    const files = [row.file, ...row.variants.map((variant) => variant.file)];
    await Promise.all(files.map((file) => this.storage.remove(mediaKey(siteId, id, file)).catch(() => {})));
    return row;
  }

  /** A stored file of the site's images for readers, by the name in its URL; null when there is none. */
  async open(siteId: string, id: string, file: string) {
    const format = formatOfFile(file);
    if (!MEDIA_ID.test(id) || !STORED_FILE.test(file) || !format) return null;
    const found = await this.storage.read(mediaKey(siteId, id, file));
    return found && { ...found, contentType: MEDIA_TYPE_OF[format] };
  }
}
