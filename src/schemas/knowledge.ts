import { Type } from '@sinclair/typebox';
import { KNOWLEDGE_STATUSES } from '../limits.js';
import { NullableString, PageQuery, PaginationSchema, SiteRef, StringEnum, Timestamp, envelope } from './common.js';

/** A knowledge item as the upload returns it (spec 2.3). */
export const KnowledgeItem = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  type: Type.String({ description: 'Media type' }),
  status: StringEnum(KNOWLEDGE_STATUSES),
  size: Type.String({ description: 'Human-readable, base 1024: "512 B", "12.3 KB", "2.4 MB"' }),
  lastUpdated: Timestamp,
  s3Key: Type.String({ description: '<site_id>/knowledge/<id>.<ext>' }),
});

export const KnowledgeDetail = Type.Composite([
  KnowledgeItem,
  Type.Object({ error: NullableString, chunkCount: Type.Integer(), createdAt: Timestamp }),
]);

export const KnowledgeUploadResponse = envelope(Type.Object({ message: Type.String(), knowledge: KnowledgeItem, site: SiteRef }));
export const KnowledgeDetailResponse = envelope(Type.Object({ message: Type.String(), knowledge: KnowledgeDetail, site: SiteRef }));
export const KnowledgeListResponse = envelope(Type.Object({ items: Type.Array(KnowledgeDetail), pagination: PaginationSchema, site: SiteRef }));
export const KnowledgeDeletedResponse = envelope(Type.Object({ message: Type.String(), knowledgeId: Type.String(), site: SiteRef }));

export const KnowledgeListQuery = Type.Object(PageQuery);

export const KnowledgeSearchQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: 500 }),
  fileIds: Type.Optional(Type.String({ maxLength: 4000, description: 'Comma-separated knowledge ids to search within' })),
  limit: Type.Integer({ minimum: 1, maximum: 50, default: 10 }),
});

export const KnowledgeSearchResponse = envelope(
  Type.Object({
    query: Type.String(),
    mode: StringEnum(
      ['lexical', 'hybrid'],
      'What this search used: `lexical` (BM25) or `hybrid` (BM25 and embedding similarity fused by reciprocal rank; scores are then fused ranks, higher is better)',
    ),
    results: Type.Array(Type.Object({ fileId: Type.String(), fileName: Type.String(), score: Type.Number(), text: Type.String() })),
    site: SiteRef,
  }),
);
