-- Counts of the posts that exist already; from now on every post write keeps them.
INSERT INTO `post_counts` (`site_id`, `drafts`, `public`, `unlisted`)
SELECT `site_id`, sum(`is_draft`), sum(`is_draft` = 0 AND `visibility` = 'public'), sum(`is_draft` = 0 AND `visibility` = 'unlisted')
FROM `posts` GROUP BY `site_id`;
