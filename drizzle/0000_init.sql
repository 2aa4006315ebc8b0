CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`prefix` text NOT NULL,
	`hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_unique` ON `api_keys` (`hash`);--> statement-breakpoint
CREATE INDEX `api_keys_site_idx` ON `api_keys` (`site_id`);--> statement-breakpoint
CREATE TABLE `knowledge_chunks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`file_id` text NOT NULL,
	`site_id` text NOT NULL,
	`ordinal` integer NOT NULL,
	`text` text NOT NULL,
	FOREIGN KEY (`file_id`) REFERENCES `knowledge_files`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `knowledge_chunks_file_idx` ON `knowledge_chunks` (`file_id`);--> statement-breakpoint
CREATE INDEX `knowledge_chunks_site_idx` ON `knowledge_chunks` (`site_id`);--> statement-breakpoint
CREATE TABLE `knowledge_files` (
	`id` text PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`name` text NOT NULL,
	`extension` text NOT NULL,
	`media_type` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`status` text NOT NULL,
	`error` text,
	`chunk_count` integer DEFAULT 0 NOT NULL,
	`storage_key` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `knowledge_site_created_idx` ON `knowledge_files` (`site_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `knowledge_status_idx` ON `knowledge_files` (`status`);--> statement-breakpoint
CREATE TABLE `posts` (
	`id` text PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`slug` text NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`content` text,
	`category` text,
	`tags` text DEFAULT '[]' NOT NULL,
	`author_id` text,
	`is_draft` integer NOT NULL,
	`visibility` text DEFAULT 'public' NOT NULL,
	`published_at` integer,
	`generator_provider` text,
	`generator_model` text,
	`source_task_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `posts_site_slug_unique` ON `posts` (`site_id`,`slug`);--> statement-breakpoint
CREATE UNIQUE INDEX `posts_source_task_unique` ON `posts` (`source_task_id`);--> statement-breakpoint
CREATE INDEX `posts_site_created_idx` ON `posts` (`site_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `sites` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`batch_id` text NOT NULL,
	`position` integer NOT NULL,
	`status` text NOT NULL,
	`topic` text NOT NULL,
	`params` text NOT NULL,
	`scheduled_for` integer NOT NULL,
	`run_after` integer NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`max_attempts` integer NOT NULL,
	`lease_owner` text,
	`lease_until` integer,
	`started_at` integer,
	`finished_at` integer,
	`last_error` text,
	`post_id` text,
	`missing_file_ids` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `tasks_claim_idx` ON `tasks` (`status`,`run_after`);--> statement-breakpoint
CREATE INDEX `tasks_site_batch_idx` ON `tasks` (`site_id`,`batch_id`);--> statement-breakpoint
CREATE INDEX `tasks_site_created_idx` ON `tasks` (`site_id`,`created_at`);