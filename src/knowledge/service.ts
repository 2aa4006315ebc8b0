import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { KnowledgeFileRow } from '../db/schema.js';
import { AppError, validationError } from '../errors.js';
import { MAX_FILE_BYTES } from '../limits.js';
import type { Page } from '../pagination.js';
import { ACCEPTED_EXTENSIONS, contentMatches, extensionOf, type KnowledgeExtension } from './detect.js';
import type { KnowledgeIndexer } from './indexer.js';
import { FUSION_CANDIDATES, fuseRankings, passageKey, type RetrievalMode, type VectorRetriever } from './hybrid.js';
import type { ObjectStore } from './object-store.js';
import { planSearch, type KnowledgeSearch, type Passage, type SearchOptions } from './search.js';
import { uploadedFileRow, type KnowledgeFileStore } from './file-rows.js';
import { safeFileName } from './storage.js';
import { quotaRefusal, type SiteStorageUsage } from './usage.js';
import { receiveOneFile, type UploadPart } from '../uploads.js';

export type { KnowledgeFileRow };

const ACCEPTED_LIST = ACCEPTED_EXTENSIONS.map((e) => `.${e}`).join(' ');

export const unsupportedFileType = (why: string) =>
  new AppError(415, 'UNSUPPORTED_FILE_TYPE', `${why}. Accepted file types: ${ACCEPTED_LIST}`, { accepted: ACCEPTED_EXTENSIONS.map((e) => `.${e}`) });

export const fileTooLarge = () => new AppError(413, 'FILE_TOO_LARGE', `The file is larger than the 10 MB limit (${MAX_FILE_BYTES} bytes)`);

/** Listed in an error at most this many at a time (the message says how many more). */
const MAX_LISTED_IDS = 20;

/** Selected file ids that are not the site's files: a 400 naming them (batch and search alike). */
export function unknownFileIds(ids: readonly string[], path: string) {
  const listed = ids.slice(0, MAX_LISTED_IDS);
  const more = ids.length > listed.length ? ` and ${ids.length - listed.length} more` : '';
  return validationError(
    `Unknown knowledge file ids: ${listed.join(', ')}${more}`,
    listed.map((id) => ({ path, message: `unknown file id ${id}` })),
  );
}

/** An upload received into a temporary file and checked, not yet stored. */
interface ReceivedUpload {
  tmpPath: string;
  name: string;
  extension: KnowledgeExtension;
  size: number;
}

export interface KnowledgeServiceOptions {
  /** What a site's stored files plus their index may take (SITE_STORAGE_QUOTA_MB); no limit without. */
  quotaBytes?: number;
  /** The storage tally the files store keeps. */
  usage?: Pick<SiteStorageUsage, 'usage'>;
  /** The vector side of search, when an embedding model is configured (OLLAMA_EMBED_MODEL); lexical only without. */
  vectors?: VectorRetriever;
}

/** A search's passages, and which retrieval found them. */
export interface SearchAnswer {
  passages: Passage[];
  mode: RetrievalMode;
}

/** A site's knowledge base: uploaded files, their index and search over it, in the database and the object store. */
export class KnowledgeService {
  constructor(
    private readonly files: KnowledgeFileStore,
    private readonly textSearch: Pick<KnowledgeSearch, 'search'>,
    private readonly storage: ObjectStore,
    private readonly indexer: KnowledgeIndexer,
    private readonly options: KnowledgeServiceOptions = {},
  ) {}

  /** 413 QUOTA_EXCEEDED when the site's files and index, plus `incomingBytes`, pass its quota. */
  private async checkQuota(siteId: string, incomingBytes: number): Promise<void> {
    const { quotaBytes, usage } = this.options;
    if (quotaBytes === undefined || !usage) return;
    const refusal = quotaRefusal(await usage.usage(siteId), quotaBytes, incomingBytes);
    if (refusal) throw refusal;
  }

  /**
   * Takes the one file part of a multipart upload: streams it to a temporary file, checks it
   * (accepted extension, matching content, not empty, within the size limit), stores it and
   * queues its indexing. Anything refused, or a store that fails, leaves nothing stored nor in
   * the database.
   */
  async upload(siteId: string, parts: AsyncIterable<UploadPart>): Promise<KnowledgeFileRow> {
    const received = await receiveOneFile(parts, {
      noun: 'file',
      admit: () => this.checkQuota(siteId, 0),
      receive: (part) => this.receive(part.filename ?? '', part.file),
      check: (upload) => this.checkQuota(siteId, upload.size),
      discard: (upload) => this.storage.discard(upload.tmpPath),
    });
    const row = await this.store(siteId, received);
    this.indexer.enqueue(row);
    return row;
  }

  private async receive(filename: string, stream: Readable & { truncated?: boolean }): Promise<ReceivedUpload> {
    const extension = extensionOf(filename);
    if (!extension) {
      stream.resume();
      throw unsupportedFileType(`"${safeFileName(filename, 'bin')}" is not an accepted file type`);
    }
    const { tmpPath, size } = await this.storage.receive(stream);
    try {
      if (stream.truncated || size > MAX_FILE_BYTES) throw fileTooLarge();
      if (size === 0) throw validationError('The file is empty', [{ path: '/body/file', message: 'must not be empty' }]);
      if (!(await contentMatches(extension, tmpPath))) {
        throw unsupportedFileType(`The content of the file is not a valid .${extension} file`);
      }
    } catch (error) {
      await this.storage.discard(tmpPath);
      throw error;
    }
    return { tmpPath, name: safeFileName(filename, extension), extension, size };
  }

  /**
   * Commits a received upload to its key, then records it as `uploaded` (indexing comes after):
   * the row appears only once the stored file is whole, and a failed commit leaves neither.
   */
  private async store(siteId: string, upload: ReceivedUpload, now = new Date()): Promise<KnowledgeFileRow> {
    const row = uploadedFileRow(siteId, randomUUID(), upload, now);
    try {
      await this.storage.commit(upload.tmpPath, row.storageKey);
    } catch (error) {
      await this.storage.discard(upload.tmpPath);
      throw error;
    }
    try {
      await this.files.insert(row);
    } catch (error) {
      // The row's failure is the answer; a store that also fails here leaves an orphan object.
      await this.storage.remove(row.storageKey).catch(() => {});
      throw error;
    }
    return row;
  }

  async get(siteId: string, fileId: string): Promise<KnowledgeFileRow> {
    return this.files.get(siteId, fileId);
  }

  async list(siteId: string, page: number, limit: number): Promise<Page<KnowledgeFileRow>> {
    return this.files.list(siteId, page, limit);
  }

  /** The best passages for a query (what grounds a post); `fileIds` that are not the site's files are a 400 naming them. */
  async search(siteId: string, query: string, options: SearchOptions = {}): Promise<Passage[]> {
    return (await this.find(siteId, query, options)).passages;
  }

  /**
   * The best passages for a query and the retrieval that found them: BM25 alone, or, when an
   * embedding model is configured and the query could be embedded now, BM25 and vector
   * similarity fused by reciprocal rank (chunks not embedded yet still come through BM25).
   */
  async find(siteId: string, query: string, options: SearchOptions = {}): Promise<SearchAnswer> {
    if (options.fileIds?.length) {
      const known = await this.files.existingIds(siteId, options.fileIds);
      const unknown = [...new Set(options.fileIds.filter((id) => !known.has(id)))];
      if (unknown.length) throw unknownFileIds(unknown, '/querystring/fileIds');
    }
    const { vectors } = this.options;
    const plan = planSearch(query, options);
    if (!vectors || !plan) return { passages: await this.textSearch.search(siteId, query, options), mode: 'lexical' };
    const candidates = { fileIds: plan.fileIds, limit: Math.max(plan.limit, FUSION_CANDIDATES) };
    const [lexical, nearest] = await Promise.all([this.textSearch.search(siteId, query, candidates), vectors.nearest(siteId, query, candidates)]);
    if (!nearest) return { passages: lexical.slice(0, plan.limit), mode: 'lexical' };
    const bm25 = new Map(lexical.map((passage) => [passageKey(passage), passage.score]));
    const fused = fuseRankings([lexical, nearest], plan.limit).map((passage) => ({ ...passage, lexicalScore: bm25.get(passageKey(passage)) ?? null }));
    return { passages: fused, mode: 'hybrid' };
  }

  /** Of the given ids, those that are the site's files (selected files a batch or task names). */
  async existingIds(siteId: string, fileIds: readonly string[]): Promise<Set<string>> {
    return this.files.existingIds(siteId, fileIds);
  }

  /**
   * Removes the stored file, then the file's row (its chunks and index entries go with it). In
   * that order, a store that cannot be reached fails the delete with the row kept, and a retry
   * finishes it; the other order would leave a stored file no row points to. A row deleted
   * meanwhile by another request is a 404.
   */
  async delete(siteId: string, fileId: string): Promise<void> {
    const row = await this.files.get(siteId, fileId);
    await this.storage.remove(row.storageKey);
    await this.files.delete(siteId, fileId);
  }
}
