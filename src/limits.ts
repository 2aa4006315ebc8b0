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
/**
 * Deepest nesting of a JSON body (objects and arrays). No body of the API needs more than a
 * few levels; anything walked recursively afterwards (validation, the idempotency
 * fingerprint) must never meet thousands, which overflow the stack.
 */
export const MAX_JSON_DEPTH = 32;

const MiB = 1024 * 1024;
/** Default of MAX_EXTRACTED_TEXT_MB: the most text taken from one knowledge file. */
export const DEFAULT_MAX_EXTRACTED_TEXT_MB = 25;
/**
 * Decompression budget of one knowledge file, whatever its sizes claim: one DOCX part or one
 * PDF stream that text extraction reads may inflate to MAX_INFLATED_PART_BYTES, all of them
 * together to MAX_INFLATED_FILE_BYTES, a PDF image (never decoded for text) to
 * MAX_INFLATED_IMAGE_BYTES. mammoth needs 25-60 bytes of memory per byte of XML, pdf.js ~9
 * per byte of content stream, so the part limit is what keeps a file's parse within the
 * extractor's memory.
 */
export const MAX_INFLATED_PART_BYTES = 32 * MiB;
export const MAX_INFLATED_FILE_BYTES = 128 * MiB;
export const MAX_INFLATED_IMAGE_BYTES = 128 * MiB;
/** A DOCX package with more entries than this is refused (Word writes a few dozen). */
export const MAX_ZIP_ENTRIES = 10_000;
/**
 * Memory of the extractor process, set from outside as its data-segment limit (RLIMIT_DATA:
 * the V8 heap, buffers and native allocations alike) where the platform has `ulimit -d`.
 */
export const EXTRACTOR_MEMORY_MB = 1536;
/** Default of SITE_STORAGE_QUOTA_MB: a site's stored files plus their index. */
export const DEFAULT_SITE_STORAGE_QUOTA_MB = 1024;
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

/** `status` filter of the post list: omitted lists drafts and public posts; `scheduled` the drafts with a `publishAt` (drafts still). */
export const POST_LIST_STATUSES = ['draft', 'scheduled', 'published', 'unlisted', 'all'] as const;
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

/** Events a webhook can subscribe to. */
export const WEBHOOK_EVENTS = [
  'post.created',
  'post.updated',
  'post.published',
  'post.unpublished',
  'post.deleted',
  'task.succeeded',
  'task.failed',
  'knowledge.indexed',
  'knowledge.failed',
  'newsletter.sent',
  'comment.created',
  'comment.approved',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
export const MAX_WEBHOOKS_PER_SITE = 20;
export const MAX_WEBHOOK_URL_LENGTH = 2000;
export const MAX_WEBHOOK_DESCRIPTION_LENGTH = 500;
/** Random bytes of a signing secret (`whsec_` + their base64; Standard Webhooks asks for 24-64). */
export const WEBHOOK_SECRET_BYTES = 32;
/** After a rotation the previous secret still signs (a second signature) for this long. */
export const WEBHOOK_PREVIOUS_SECRET_TTL_MS = 24 * 3_600_000;
/** A delivery is retried for this long after it was queued (or retried by hand). */
export const WEBHOOK_RETRY_WINDOW_MS = 24 * 3_600_000;
/** The longest wait between two attempts of a delivery (before jitter). */
export const WEBHOOK_RETRY_MAX_DELAY_MS = 3 * 3_600_000;
/** An endpoint whose every attempt failed for this long in a row is disabled. */
export const WEBHOOK_DISABLE_AFTER_MS = 24 * 3_600_000;
/** Most of a receiver's answer that is read; the rest is dropped unread. */
export const WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024;
/** Characters of a receiver's answer kept with an attempt, to show in the deliveries list. */
export const WEBHOOK_RESPONSE_EXCERPT_CHARS = 1000;
/** Attempts shown with each delivery in the deliveries list (the most recent). */
export const WEBHOOK_ATTEMPTS_SHOWN = 10;
/** Finished deliveries (and their attempts) are kept this long. */
export const WEBHOOK_DELIVERY_RETENTION_MS = 30 * 86_400_000;
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** Idempotency-Key: 1-255 printable ASCII characters; answers are kept this long. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/**
 * On PostgreSQL, how long a request's claim on its key holds before another may take the key:
 * longer than any request runs, short enough that a key whose instance died is free soon.
 */
export const IDEMPOTENCY_RUNNING_LEASE_MS = 15 * 60_000;

/** Image formats the media library takes (checked by content) and stores. */
export const IMAGE_FORMATS = ['jpeg', 'png', 'webp', 'gif', 'avif'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];
/** An image upload's largest size, 20 MiB. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
/** An image's largest pixel count (width x height x frames), checked from its header before it is decoded. */
export const MAX_IMAGE_PIXELS = 50_000_000;
/** The stored original's largest width; variants are made at these narrower widths (never wider than the original). */
export const MAX_IMAGE_WIDTH = 2000;
export const IMAGE_VARIANT_WIDTHS = [600, 1000, 1600] as const;
export const MAX_ALT_LENGTH = 1000;

/** A narrower copy of an image, stored beside its original. */
export interface ImageVariant {
  file: string;
  format: ImageFormat;
  width: number;
  height: number;
  sizeBytes: number;
}

/** A site's comments: off, each waiting for approval (the default), or open to returning commenters. */
export const COMMENT_MODES = ['off', 'moderated', 'open'] as const;
export type CommentMode = (typeof COMMENT_MODES)[number];
export const COMMENT_STATUSES = ['pending', 'approved', 'spam'] as const;
export type CommentStatus = (typeof COMMENT_STATUSES)[number];
export const MAX_COMMENT_NAME_LENGTH = 80;
export const MAX_COMMENT_BODY_LENGTH = 5000;
export const MAX_COMMENT_EMAIL_LENGTH = 254;
