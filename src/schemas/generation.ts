import { Type } from '@sinclair/typebox';
import { MAX_ALT_LENGTH, BATCH_STATUSES, JOB_STATUSES, LENGTHS, MAX_AUDIENCE_LENGTH, MAX_AUTHOR_ID_LENGTH, MAX_BATCH_POSTS, MAX_CATEGORY_LENGTH, MAX_TAGS, MAX_TAG_LENGTH, MAX_TOPIC_LENGTH, STYLES, TONES } from '../limits.js';
import { NullableString, PageQuery, PaginationSchema, SiteRef, StringEnum, Timestamp, envelope } from './common.js';
import { PostSummary } from './posts.js';

/** The spec's batch example lists tone `formal`; it is accepted there and means `authoritative`. */
export const BATCH_TONES = [...TONES, 'formal'] as const;

// Room for surrounding whitespace: the core trims and then holds the topic to MAX_TOPIC_LENGTH.
const Topic = Type.String({ minLength: 1, maxLength: 1000, description: `1-${MAX_TOPIC_LENGTH} characters after trimming` });
const DateTime = Type.String({ format: 'date-time' });

const featureImageFields = {
  featureImage: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "The id of an image of the site's media library, the post's feature image" })),
  featureImageAlt: Type.Optional(Type.String({ maxLength: MAX_ALT_LENGTH, description: "Its alt text for this post (the image's own when left out)" })),
};

const generationFields = <T extends string>(tones: readonly T[]) => ({
  style: Type.Optional(StringEnum(STYLES)),
  length: Type.Optional(StringEnum(LENGTHS)),
  tone: Type.Optional(StringEnum(tones)),
  includeExamples: Type.Optional(Type.Boolean()),
  targetAudience: Type.Optional(Type.Union([Type.String({ maxLength: MAX_AUDIENCE_LENGTH }), Type.Null()])),
});

export const GenerateBody = Type.Object(
  { topic: Topic, ...generationFields(TONES), ...featureImageFields },
  { examples: [{ topic: 'How to brew better coffee at home', style: 'casual', length: 'short', tone: 'conversational', includeExamples: true, targetAudience: 'beginners' }] },
);

/** What the writer says about a post it wrote: for staff, never part of the post readers see. */
const WriterNotes = {
  notes: Type.Array(Type.String(), { description: 'What the writer says about its work (the documents drawn on, why the post is short): for staff, never in the post' }),
  outline: Type.Boolean({ description: 'No source covered the topic: the post is an outline for a person to write, kept as a draft' }),
};

export const GenerateResponse = Type.Object({
  message: Type.String(),
  post: PostSummary,
  generation: Type.Object(
    {
      provider: Type.String(),
      model: Type.String(),
      ...WriterNotes,
      sources: Type.Array(Type.String(), { description: 'Knowledge files the post was grounded on' }),
      unmatchedWords: Type.Array(Type.String(), { description: "When no file was drawn on: the topic's words (or phrases) that no passage of the knowledge base contains, to reword" }),
    },
    { description: "The writer's notes on the post (beyond the specification's fields)" },
  ),
  site: SiteRef,
  timestamp: Timestamp,
  api: Type.Object({ version: Type.String(), status: Type.String() }),
});

const batchFields = {
  ...generationFields(BATCH_TONES),
  ...featureImageFields,
  authorId: Type.Optional(Type.Union([Type.String({ maxLength: MAX_AUTHOR_ID_LENGTH }), Type.Null()])),
  category: Type.Optional(Type.Union([Type.String({ maxLength: MAX_CATEGORY_LENGTH }), Type.Null()])),
  tags: Type.Optional(Type.Array(Type.String({ maxLength: MAX_TAG_LENGTH }), { maxItems: MAX_TAGS })),
  status: Type.Optional(StringEnum(BATCH_STATUSES, 'DRAFT (default), UNLISTED or PUBLISHED')),
  useKnowledge: Type.Optional(Type.Boolean()),
  selectedFileIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 })),
  model: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()])),
  publishAt: Type.Optional(
    Type.String({ format: 'date-time', description: 'Publish the generated draft at this time (not before its task is due): time to read it first' }),
  ),
};

export const BatchBody = Type.Object(
  {
  posts: Type.Array(Type.Object({ topic: Topic, scheduledFor: Type.Optional(DateTime), ...batchFields }), {
    minItems: 1,
    maxItems: MAX_BATCH_POSTS,
  }),
  startDate: Type.Optional(DateTime),
  endDate: Type.Optional(DateTime),
  defaults: Type.Optional(Type.Object(batchFields)),
  },
  {
    examples: [
      {
        startDate: '2026-12-01T09:00:00Z',
        endDate: '2026-12-31T09:00:00Z',
        defaults: { category: 'Coffee', status: 'PUBLISHED', length: 'short' },
        posts: [{ topic: 'Espresso basics' }, { topic: 'Cold brew', scheduledFor: '2026-12-24T08:00:00Z' }],
      },
    ],
  },
);

export const BatchResponse = envelope(
  Type.Object({
    message: Type.String(),
    taskIds: Type.Array(Type.String()),
    totalPosts: Type.Integer(),
    site: SiteRef,
    batchId: Type.String(),
  }),
);

const TaskStatus = StringEnum(JOB_STATUSES);
const NullableTime = Type.Union([Timestamp, Type.Null()]);

export const TaskSchema = Type.Object({
  id: Type.String(),
  status: TaskStatus,
  topic: Type.String(),
  scheduledFor: Timestamp,
  attempts: Type.Integer(),
  maxAttempts: Type.Integer(),
  startedAt: NullableTime,
  finishedAt: NullableTime,
  lastError: NullableString,
  postId: NullableString,
  batchId: Type.String(),
  missingFileIds: Type.Array(Type.String(), { description: 'Selected knowledge files that were deleted before the task ran' }),
  ...WriterNotes,
  keptAsDraft: Type.Boolean({ description: 'The post was kept as a draft although the batch asked for another status (an outline is not a post)' }),
  createdAt: Timestamp,
});

export const TaskResponse = envelope(Type.Object({ message: Type.String(), task: TaskSchema, site: SiteRef }));
export const TaskListResponse = envelope(Type.Object({ tasks: Type.Array(TaskSchema), pagination: PaginationSchema, site: SiteRef }));
export const TaskListQuery = Type.Object({
  ...PageQuery,
  batchId: Type.Optional(Type.String({ maxLength: 100 })),
  status: Type.Optional(TaskStatus),
});
