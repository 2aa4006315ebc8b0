CREATE TABLE `analytics_days` (
	`site_id` text NOT NULL,
	`day` text NOT NULL,
	`views` integer DEFAULT 0 NOT NULL,
	`visitors` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`site_id`, `day`),
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `analytics_days_day_idx` ON `analytics_days` (`day`);--> statement-breakpoint
CREATE TABLE `analytics_pages` (
	`site_id` text NOT NULL,
	`day` text NOT NULL,
	`page` text NOT NULL,
	`views` integer DEFAULT 0 NOT NULL,
	`visitors` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`site_id`, `day`, `page`),
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `analytics_pages_day_idx` ON `analytics_pages` (`day`);--> statement-breakpoint
CREATE TABLE `analytics_referrers` (
	`site_id` text NOT NULL,
	`day` text NOT NULL,
	`referrer` text NOT NULL,
	`views` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`site_id`, `day`, `referrer`),
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `analytics_referrers_day_idx` ON `analytics_referrers` (`day`);--> statement-breakpoint
CREATE TABLE `analytics_salts` (
	`day` text PRIMARY KEY NOT NULL,
	`salt` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `analytics_visitors` (
	`site_id` text NOT NULL,
	`day` text NOT NULL,
	`page` text NOT NULL,
	`hash` text NOT NULL,
	PRIMARY KEY(`site_id`, `day`, `page`, `hash`),
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `analytics_visitors_day_idx` ON `analytics_visitors` (`day`);--> statement-breakpoint
ALTER TABLE `sites` ADD `time_zone` text DEFAULT 'UTC' NOT NULL;