CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`site_id` text NOT NULL,
	`group_id` text,
	`position` integer DEFAULT 0 NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`scheduled_for` integer NOT NULL,
	`run_after` integer NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`max_attempts` integer NOT NULL,
	`lease_owner` text,
	`lease_until` integer,
	`started_at` integer,
	`finished_at` integer,
	`last_error` text,
	`result` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `jobs_claim_idx` ON `jobs` (`status`,`run_after`);--> statement-breakpoint
CREATE INDEX `jobs_site_kind_group_idx` ON `jobs` (`site_id`,`kind`,`group_id`);--> statement-breakpoint
CREATE INDEX `jobs_site_kind_created_idx` ON `jobs` (`site_id`,`kind`,`created_at`);