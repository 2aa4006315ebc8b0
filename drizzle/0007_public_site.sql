CREATE TABLE `post_slug_redirects` (
	`site_id` text NOT NULL,
	`slug` text NOT NULL,
	`post_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`site_id`, `slug`),
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `post_slug_redirects_post_idx` ON `post_slug_redirects` (`post_id`);--> statement-breakpoint
ALTER TABLE `posts` ADD `html` text;--> statement-breakpoint
ALTER TABLE `posts` ADD `reading_time` integer;--> statement-breakpoint
CREATE INDEX `posts_site_public_idx` ON `posts` (`site_id`,`is_draft`,`visibility`,`published_at`);--> statement-breakpoint
-- SQLite cannot add a NOT NULL column without a default: existing sites get '' and then a
-- handle of their own (the service gives new sites one from their name).
ALTER TABLE `sites` ADD `handle` text DEFAULT '' NOT NULL;--> statement-breakpoint
UPDATE `sites` SET `handle` = 'site-' || substr(`id`, 1, 8);--> statement-breakpoint
ALTER TABLE `sites` ADD `url` text;--> statement-breakpoint
ALTER TABLE `sites` ADD `description` text;--> statement-breakpoint
ALTER TABLE `sites` ADD `language` text DEFAULT 'en' NOT NULL;--> statement-breakpoint
ALTER TABLE `sites` ADD `posts_per_page` integer DEFAULT 10 NOT NULL;--> statement-breakpoint
ALTER TABLE `sites` ADD `content_version` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `sites` ADD `content_updated_at` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `sites_handle_unique` ON `sites` (`handle`);