CREATE TABLE `comments` (
	`id` text PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`post_id` text NOT NULL,
	`parent_id` text,
	`author_name` text NOT NULL,
	`author_email` text,
	`body` text NOT NULL,
	`status` text NOT NULL,
	`held_for` text,
	`by_staff` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`parent_id`) REFERENCES `comments`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `comments_post_idx` ON `comments` (`post_id`,`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `comments_site_status_idx` ON `comments` (`site_id`,`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `comments_site_email_idx` ON `comments` (`site_id`,`author_email`);--> statement-breakpoint
CREATE INDEX `comments_parent_idx` ON `comments` (`parent_id`);--> statement-breakpoint
ALTER TABLE `posts` ADD `comments_enabled` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `sites` ADD `comments_mode` text DEFAULT 'moderated' NOT NULL;--> statement-breakpoint
ALTER TABLE `sites` ADD `blocked_words` text DEFAULT '[]' NOT NULL;