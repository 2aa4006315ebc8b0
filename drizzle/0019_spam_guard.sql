CREATE TABLE `spam_guard_challenges` (
	`id` text PRIMARY KEY NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `spam_guard_challenges_expires_idx` ON `spam_guard_challenges` (`expires_at`);--> statement-breakpoint
CREATE TABLE `spam_guard_keys` (
	`name` text PRIMARY KEY NOT NULL,
	`secret` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `spam_guard_windows` (
	`key` text PRIMARY KEY NOT NULL,
	`window_start` integer NOT NULL,
	`count` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `spam_guard_windows_start_idx` ON `spam_guard_windows` (`window_start`);