CREATE TABLE `media` (
	`id` text PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`file` text NOT NULL,
	`name` text NOT NULL,
	`format` text NOT NULL,
	`width` integer NOT NULL,
	`height` integer NOT NULL,
	`alt` text DEFAULT '' NOT NULL,
	`size_bytes` integer NOT NULL,
	`variants` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `media_site_created_idx` ON `media` (`site_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `posts` ADD `feature_image` text;--> statement-breakpoint
ALTER TABLE `posts` ADD `feature_image_alt` text;