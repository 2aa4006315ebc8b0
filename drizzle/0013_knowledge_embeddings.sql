CREATE TABLE `knowledge_embeddings` (
	`chunk_id` integer PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`model` text NOT NULL,
	`vector` blob NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`chunk_id`) REFERENCES `knowledge_chunks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `knowledge_embeddings_site_model_idx` ON `knowledge_embeddings` (`site_id`,`model`);