CREATE TABLE `post_pending_changes` (
	`post_id` text PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`content` text,
	`author_id` text,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `post_revisions` (
	`id` text PRIMARY KEY NOT NULL,
	`post_id` text NOT NULL,
	`site_id` text NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`content` text,
	`author_id` text,
	`kind` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `post_revisions_post_idx` ON `post_revisions` (`post_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `posts` ADD `review_requested_at` integer;--> statement-breakpoint
ALTER TABLE `posts` ADD `preview_token` text;--> statement-breakpoint
CREATE UNIQUE INDEX `posts_preview_token_unique` ON `posts` (`preview_token`);--> statement-breakpoint
ALTER TABLE `users` ADD `display_name` text;