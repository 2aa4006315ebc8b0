import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { and, count, desc, eq, inArray } from 'drizzle-orm';
import type { Db, DbHandle } from '../db/client.js';
import { knowledgeChunks, knowledgeFiles, type KnowledgeFileRow } from '../db/schema.js';
import { AppError, notFound, validationError } from '../errors.js';
import { paginate, type Page } from '../pagination.js';
import { ACCEPTED_EXTENSIONS, MEDIA_TYPES, contentMatches, extensionOf, type KnowledgeExtension } from './detect.js';
import { FileStorage, safeFileName, storageKeyFor } from './storage.js';

export const MAX_FILE_BYTES = 10 * 1024 * 1024;

const ACCEPTED_LIST = ACCEPTED_EXTENSIONS.map((e) => `.${e}`).join(' ');

export const unsupportedFileType = (why: string) =>
  new AppError(415, 'UNSUPPORTED_FILE_TYPE', `${why}. Accepted file types: ${ACCEPTED_LIST}`, { accepted: ACCEPTED_EXTENSIONS.map((e) => `.${e}`) });

export const fileTooLarge = () => new AppError(413, 'FILE_TOO_LARGE', `The file is larger than the 10 MB limit (${MAX_FILE_BYTES} bytes)`);

/** An upload received into a temporary file and checked, not yet stored. */
export interface ReceivedUpload {
  tmpPath: string;
  name: string;
  extension: KnowledgeExtension;
  size: number;
}

/**
 * Streams one uploaded file to a temporary file and checks it: accepted extension, matching
 * content, not empty, within the size limit. Anything refused leaves nothing behind.
 */
export async function receiveUpload(
  storage: FileStorage,
  upload: { filename: string; stream: Readable & { truncated?: boolean } },
): Promise<ReceivedUpload> {
  const extension = extensionOf(upload.filename);
  if (!extension) {
    upload.stream.resume();
    throw unsupportedFileType(`"${safeFileName(upload.filename, 'bin')}" is not an accepted file type`);
  }
  const { tmpPath, size } = await storage.receive(upload.stream);
  try {
    if (upload.stream.truncated || size > MAX_FILE_BYTES) throw fileTooLarge();
    if (size === 0) throw validationError('The file is empty', [{ path: '/body/file', message: 'must not be empty' }]);
    if (!(await contentMatches(extension, tmpPath))) {
      throw unsupportedFileType(`The content of the file is not a valid .${extension} file`);
    }
  } catch (error) {
    await storage.discard(tmpPath);
    throw error;
  }
  return { tmpPath, name: safeFileName(upload.filename, extension), extension, size };
}

/** Moves a received upload into storage and records it as `uploaded`; indexing comes after. */
export async function storeUpload(handle: DbHandle, storage: FileStorage, siteId: string, upload: ReceivedUpload, now = new Date()): Promise<KnowledgeFileRow> {
  const id = randomUUID();
  const row: KnowledgeFileRow = {
    id,
    siteId,
    name: upload.name,
    extension: upload.extension,
    mediaType: MEDIA_TYPES[upload.extension],
    sizeBytes: upload.size,
    status: 'uploaded',
    error: null,
    chunkCount: 0,
    storageKey: storageKeyFor(siteId, id, upload.extension),
    createdAt: now,
    updatedAt: now,
  };
  await storage.commit(upload.tmpPath, row.storageKey);
  try {
    handle.db.insert(knowledgeFiles).values(row).run();
  } catch (error) {
    await storage.remove(row.storageKey);
    throw error;
  }
  return row;
}

export function getKnowledgeFile(db: Db, siteId: string, fileId: string): KnowledgeFileRow {
  const row = db
    .select()
    .from(knowledgeFiles)
    .where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.siteId, siteId)))
    .get();
  if (!row) throw notFound('knowledge item');
  return row;
}

export function listKnowledgeFiles(db: Db, siteId: string, page: number, limit: number): Page<KnowledgeFileRow> {
  const where = eq(knowledgeFiles.siteId, siteId);
  return paginate(
    page,
    limit,
    () => db.select({ n: count() }).from(knowledgeFiles).where(where).get()!.n,
    (offset, size) =>
      db.select().from(knowledgeFiles).where(where).orderBy(desc(knowledgeFiles.createdAt), desc(knowledgeFiles.id)).limit(size).offset(offset).all(),
  );
}

/** Of the given ids, those that are knowledge files of the site. */
export function existingFileIds(db: Db, siteId: string, fileIds: readonly string[]): Set<string> {
  if (fileIds.length === 0) return new Set();
  const rows = db
    .select({ id: knowledgeFiles.id })
    .from(knowledgeFiles)
    .where(and(eq(knowledgeFiles.siteId, siteId), inArray(knowledgeFiles.id, [...fileIds])))
    .all();
  return new Set(rows.map((r) => r.id));
}

/** Removes the file's row, chunks and index entries in one transaction, then the stored file. */
export async function deleteKnowledgeFile(handle: DbHandle, storage: FileStorage, siteId: string, fileId: string): Promise<void> {
  const row = handle.db.transaction((tx) => {
    const found = getKnowledgeFile(tx as unknown as Db, siteId, fileId);
    handle.sqlite.prepare('delete from knowledge_fts where file_id = ?').run(fileId);
    tx.delete(knowledgeChunks).where(eq(knowledgeChunks.fileId, fileId)).run();
    tx.delete(knowledgeFiles).where(eq(knowledgeFiles.id, fileId)).run();
    return found;
  });
  await storage.remove(row.storageKey);
}
