-- The full-text index becomes an external-content FTS5 table over knowledge_chunks: chunk
-- text is stored once, and triggers keep the index in step with every insert, update and
-- delete of a chunk (including the cascade from a deleted file or site), so code writes and
-- deletes chunks as plain rows.
DROP TABLE `knowledge_fts`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `knowledge_fts` USING fts5(
	`text`,
	`site_id` UNINDEXED,
	`file_id` UNINDEXED,
	content = 'knowledge_chunks',
	content_rowid = 'id',
	tokenize = 'porter unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_fts_insert` AFTER INSERT ON `knowledge_chunks` BEGIN
	INSERT INTO `knowledge_fts` (`rowid`, `text`, `site_id`, `file_id`) VALUES (new.`id`, new.`text`, new.`site_id`, new.`file_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_fts_delete` AFTER DELETE ON `knowledge_chunks` BEGIN
	INSERT INTO `knowledge_fts` (`knowledge_fts`, `rowid`, `text`, `site_id`, `file_id`) VALUES ('delete', old.`id`, old.`text`, old.`site_id`, old.`file_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `knowledge_chunks_fts_update` AFTER UPDATE ON `knowledge_chunks` BEGIN
	INSERT INTO `knowledge_fts` (`knowledge_fts`, `rowid`, `text`, `site_id`, `file_id`) VALUES ('delete', old.`id`, old.`text`, old.`site_id`, old.`file_id`);
	INSERT INTO `knowledge_fts` (`rowid`, `text`, `site_id`, `file_id`) VALUES (new.`id`, new.`text`, new.`site_id`, new.`file_id`);
END;
--> statement-breakpoint
INSERT INTO `knowledge_fts` (`knowledge_fts`) VALUES ('rebuild');
