import { Type } from '@sinclair/typebox';
import { BATCH_STATUSES, MAX_BATCH_POSTS } from '../jobs/batch.js';
import { LENGTHS, STYLES, TONES } from '../generation/types.js';
import { NullableString, PageQuery, PaginationSchema, SiteRef, Timestamp, envelope } from './common.js';
import { PostSummary } from './posts.js';

/** A string enumeration; validation errors name the allowed values. */
export const StringEnum = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], description });

/** The spec's batch example lists tone `formal`; it is accepted there and means `authoritative`. */
export const BATCH_TONES = [...TONES, 'formal'] as const;

const Topic = Type.String({ minLength: 1, maxLength: 1000, description: '1-300 characters after trimming' });
const DateTime = Type.String({ format: 'date-time' });

const generationFields = <T extends string>(tones: readonly T[]) => ({
  style: Type.Optional(StringEnum(STYLES)),
  length: Type.Optional(StringEnum(LENGTHS)),
  tone: Type.Optional(StringEnum(tones)),
  includeExamples: Type.Optional(Type.Boolean()),
  targetAudience: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
});

export const GenerateBody = Type.Object({ topic: Topic, ...generationFields(TONES) });

export const GenerateResponse = Type.Object({
  message: Type.String(),
  post: PostSummary,
  site: SiteRef,
  timestamp: Timestamp,
  api: Type.Object({ version: Type.String(), status: Type.String() }),
});

const batchFields = {
  ...generationFields(BATCH_TONES),
  authorId: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
  category: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
  tags: Type.Optional(Type.Array(Type.String({ maxLength: 50 }), { maxItems: 20 })),
  status: Type.Optional(StringEnum(BATCH_STATUSES, 'DRAFT (default), UNLISTED or PUBLISHED')),
  useKnowledge: Type.Optional(Type.Boolean()),
  selectedFileIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 })),
  model: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()])),
};

export const BatchBody = Type.Object({
  posts: Type.Array(Type.Object({ topic: Topic, scheduledFor: Type.Optional(DateTime), ...batchFields }), {
    minItems: 1,
    maxItems: MAX_BATCH_POSTS,
  }),
  startDate: Type.Optional(DateTime),
  endDate: Type.Optional(DateTime),
  defaults: Type.Optional(Type.Object(batchFields)),
});

export const BatchResponse = envelope(
  Type.Object({
    message: Type.String(),
    taskIds: Type.Array(Type.String()),
    totalPosts: Type.Integer(),
    site: SiteRef,
    batchId: Type.String(),
  }),
);

const TaskStatus = StringEnum(['pending', 'running', 'succeeded', 'failed', 'cancelled'] as const);
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
  createdAt: Timestamp,
});

export const TaskResponse = envelope(Type.Object({ message: Type.String(), task: TaskSchema, site: SiteRef }));
export const TaskListResponse = envelope(Type.Object({ tasks: Type.Array(TaskSchema), pagination: PaginationSchema, site: SiteRef }));
export const TaskListQuery = Type.Object({
  ...PageQuery,
  batchId: Type.Optional(Type.String({ maxLength: 100 })),
  status: Type.Optional(TaskStatus),
});
