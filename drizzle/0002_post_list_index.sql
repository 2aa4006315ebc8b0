DROP INDEX `posts_site_created_idx`;--> statement-breakpoint
CREATE INDEX `posts_site_list_idx` ON `posts` (`site_id`,`created_at`,`is_draft`,`visibility`);