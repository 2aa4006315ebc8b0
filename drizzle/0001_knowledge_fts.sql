-- Full-text index over knowledge chunks (BM25 ranking). drizzle-kit cannot describe FTS5
-- virtual tables, so this custom migration creates it. Rows are written and removed by the
-- knowledge index in the same transaction as their chunk (rowid = knowledge_chunks.id).
CREATE VIRTUAL TABLE `knowledge_fts` USING fts5(
	`text`,
	`site_id` UNINDEXED,
	`file_id` UNINDEXED,
	tokenize = 'porter unicode61 remove_diacritics 2'
);
