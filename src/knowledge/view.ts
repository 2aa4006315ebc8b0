import type { KnowledgeFileRow } from '../db/schema.js';
import { formatSize } from './storage.js';

/** A knowledge file as the API shows it (GET /api/v1/knowledge/:id). Webhooks send the same. */
export const knowledgeResource = (row: KnowledgeFileRow) => ({
  id: row.id,
  name: row.name,
  type: row.mediaType,
  status: row.status,
  size: formatSize(row.sizeBytes),
  lastUpdated: row.updatedAt,
  s3Key: row.storageKey,
  error: row.error,
  chunkCount: row.chunkCount,
  createdAt: row.createdAt,
});
