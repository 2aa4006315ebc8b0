-- Batch tasks become jobs of kind 'generate-post': topic and options move into the payload,
-- the post made and the files found missing into the result. The old table is dropped by
-- the next migration.
INSERT INTO `jobs` (`id`, `kind`, `site_id`, `group_id`, `position`, `payload`, `status`, `scheduled_for`, `run_after`,
	`attempts`, `max_attempts`, `lease_owner`, `lease_until`, `started_at`, `finished_at`, `last_error`, `result`,
	`created_at`, `updated_at`)
SELECT `id`, 'generate-post', `site_id`, `batch_id`, `position`, json_object('topic', `topic`, 'params', json(`params`)),
	`status`, `scheduled_for`, `run_after`, `attempts`, `max_attempts`, `lease_owner`, `lease_until`, `started_at`,
	`finished_at`, `last_error`,
	CASE WHEN `status` = 'succeeded'
		THEN json_object('postId', `post_id`, 'missingFileIds', json(coalesce(`missing_file_ids`, '[]')))
	END,
	`created_at`, `updated_at`
FROM `tasks`;
