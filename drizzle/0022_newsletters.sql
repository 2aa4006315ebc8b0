CREATE TABLE `newsletter_recipients` (
	`post_id` text NOT NULL,
	`subscriber_id` text NOT NULL,
	`email` text NOT NULL,
	`unsubscribe_token` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`claimed_by` text,
	`claimed_until` integer,
	`last_error` text,
	`sent_at` integer,
	PRIMARY KEY(`post_id`, `subscriber_id`),
	FOREIGN KEY (`post_id`) REFERENCES `newsletter_sends`(`post_id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`subscriber_id`) REFERENCES `subscribers`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `newsletter_recipients_claim_idx` ON `newsletter_recipients` (`post_id`,`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `newsletter_recipients_subscriber_idx` ON `newsletter_recipients` (`subscriber_id`);--> statement-breakpoint
CREATE TABLE `newsletter_sends` (
	`post_id` text PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`status` text NOT NULL,
	`recipients` integer NOT NULL,
	`created_at` integer NOT NULL,
	`finished_at` integer,
	FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `newsletter_sends_site_idx` ON `newsletter_sends` (`site_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `subscribers` (
	`id` text PRIMARY KEY NOT NULL,
	`site_id` text NOT NULL,
	`email` text NOT NULL,
	`status` text NOT NULL,
	`consent_source` text NOT NULL,
	`consented_at` integer,
	`unsubscribe_token` text NOT NULL,
	`confirm_token_hash` text,
	`confirm_expires_at` integer,
	`confirm_sent_at` integer,
	`bounces` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `subscribers_site_email_unique` ON `subscribers` (`site_id`,`email`);--> statement-breakpoint
CREATE UNIQUE INDEX `subscribers_unsubscribe_token_unique` ON `subscribers` (`unsubscribe_token`);--> statement-breakpoint
CREATE UNIQUE INDEX `subscribers_confirm_token_unique` ON `subscribers` (`confirm_token_hash`);--> statement-breakpoint
CREATE INDEX `subscribers_site_status_idx` ON `subscribers` (`site_id`,`status`,`created_at`);--> statement-breakpoint
ALTER TABLE `posts` ADD `send_newsletter` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `sites` ADD `newsletter_enabled` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `sites` ADD `newsletter_sender_name` text;--> statement-breakpoint
ALTER TABLE `sites` ADD `newsletter_reply_to` text;--> statement-breakpoint
ALTER TABLE `sites` ADD `newsletter_footer` text;