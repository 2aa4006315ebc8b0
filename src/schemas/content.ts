import { Type } from '@sinclair/typebox';
import { MAX_CATEGORY_LENGTH, MAX_HANDLE_LENGTH, MAX_SLUG_LENGTH, MAX_TAG_LENGTH } from '../limits.js';
import { NullableString, PageQuery, PaginationSchema, StringEnum, Timestamp, envelope } from './common.js';

/** A published post as the public content API shows it: for front ends that render posts themselves. */
export const ContentPost = Type.Object({
  id: Type.String({ format: 'uuid' }),
  slug: Type.String(),
  url: Type.String({ description: 'Absolute URL of the post page' }),
  title: Type.String(),
  description: NullableString,
  html: Type.String({ description: 'The content rendered to HTML (raw HTML in the Markdown is escaped)' }),
  readingTime: Type.Integer({ description: 'Minutes' }),
  category: NullableString,
  tags: Type.Array(Type.String()),
  authorId: NullableString,
  visibility: Type.String(),
  publishedAt: Timestamp,
  updatedAt: Timestamp,
});

export const ContentSite = Type.Object({ name: Type.String(), handle: Type.String(), url: Type.String(), language: Type.String(), description: NullableString });

export const ContentSiteParams = Type.Object({ handle: Type.String({ minLength: 1, maxLength: MAX_HANDLE_LENGTH }) });
export const ContentPostParams = Type.Object({ handle: Type.String({ minLength: 1, maxLength: MAX_HANDLE_LENGTH }), slug: Type.String({ minLength: 1, maxLength: MAX_SLUG_LENGTH }) });
export const ContentListQuery = Type.Object({
  ...PageQuery,
  tag: Type.Optional(Type.String({ maxLength: MAX_TAG_LENGTH })),
  category: Type.Optional(Type.String({ maxLength: MAX_CATEGORY_LENGTH })),
});

export const ContentListResponse = envelope(Type.Object({ posts: Type.Array(ContentPost), pagination: PaginationSchema, site: ContentSite }));
export const ContentPostResponse = envelope(Type.Object({ post: ContentPost, site: ContentSite }));

/** The public forms the spam guard issues challenges for. */
export const GUARDED_FORMS = ['comment', 'subscribe'] as const;
export type GuardedForm = (typeof GUARDED_FORMS)[number];

export const ChallengeQuery = Type.Object({
  form: StringEnum(GUARDED_FORMS, 'The form the challenge is for; an answer is good for that form of that site only'),
});

/** An ALTCHA proof-of-work challenge, as the `altcha` widget fetches it (the object itself, no envelope). */
export const ChallengeResponse = Type.Object(
  {
    parameters: Type.Object(
      {
        algorithm: Type.String(),
        nonce: Type.String(),
        salt: Type.String(),
        cost: Type.Integer(),
        keyLength: Type.Integer(),
        keyPrefix: Type.String(),
        keySignature: Type.Optional(Type.String()),
        expiresAt: Type.Optional(Type.Integer({ description: 'Seconds since the epoch' })),
        data: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]))),
      },
      { additionalProperties: true },
    ),
    signature: Type.String(),
  },
  { description: 'Solve it (the widget does), then send `base64(JSON { challenge, solution })` in the form\'s `altcha` field' },
);
