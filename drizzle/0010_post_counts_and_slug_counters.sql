CREATE TABLE `post_counts` (
	`site_id` text PRIMARY KEY NOT NULL,
	`drafts` integer DEFAULT 0 NOT NULL,
	`public` integer DEFAULT 0 NOT NULL,
	`unlisted` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `slug_counters` (
	`site_id` text NOT NULL,
	`base` text NOT NULL,
	`last` integer NOT NULL,
	PRIMARY KEY(`site_id`, `base`),
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
