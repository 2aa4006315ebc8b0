/**
 * Limits and enumerations of the API, defined once: the TypeBox schemas and the core both
 * import them from here, the lowest layer, so neither copies a number the other decides.
 */

export const MAX_TITLE_LENGTH = 300;
export const MAX_TAGS = 20;
export const MAX_TAG_LENGTH = 50;
export const MAX_DESCRIPTION_LENGTH = 2000;
export const MAX_CONTENT_LENGTH = 1_000_000;
export const MAX_CATEGORY_LENGTH = 100;
export const MAX_AUTHOR_ID_LENGTH = 100;
export const MAX_SLUG_LENGTH = 80;
export const MAX_TOPIC_LENGTH = 300;
export const MAX_AUDIENCE_LENGTH = 200;
export const MAX_BATCH_POSTS = 100;
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
export const MAX_SITE_NAME_LENGTH = 200;
export const MAX_SITE_DESCRIPTION_LENGTH = 500;
export const MIN_HANDLE_LENGTH = 2;
export const MAX_HANDLE_LENGTH = 40;
export const MAX_POSTS_PER_PAGE = 100;

/**
 * Paths the service or a site's pages use: never a post slug (a title slugging to one gets
 * `-2`) nor a site handle.
 */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  'api', 'content', 'docs', 'health', 'ready', 'sites', 'page', 'tag', 'category', 'assets', 'feed', 'rss', 'atom',
  'sitemap', 'robots', 'static', 'admin', 'login', 'favicon',
]);

/** Page numbers beyond this are refused: the offset must stay far inside SQLite's integers. */
export const MAX_PAGE = 1_000_000;
export const MAX_LIMIT = 100;
export const DEFAULT_LIMIT = 20;

export const VISIBILITIES = ['public', 'unlisted'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

/** `status` filter of the post list: omitted lists drafts and public posts. */
export const POST_LIST_STATUSES = ['draft', 'published', 'unlisted', 'all'] as const;
export type PostListStatus = (typeof POST_LIST_STATUSES)[number];

export const STYLES = ['professional', 'casual', 'technical', 'creative', 'academic'] as const;
export const LENGTHS = ['short', 'medium', 'long'] as const;
export const TONES = ['informative', 'persuasive', 'conversational', 'authoritative'] as const;
export type Style = (typeof STYLES)[number];
export type Length = (typeof LENGTHS)[number];
export type Tone = (typeof TONES)[number];

export const BATCH_STATUSES = ['DRAFT', 'UNLISTED', 'PUBLISHED'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

export const JOB_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const KNOWLEDGE_STATUSES = ['uploaded', 'indexed', 'failed'] as const;
export type KnowledgeStatus = (typeof KNOWLEDGE_STATUSES)[number];
