import { Type } from '@sinclair/typebox';
import {
  MAX_AUTHOR_ID_LENGTH,
  MAX_CATEGORY_LENGTH,
  MAX_CONTENT_LENGTH,
  MAX_DESCRIPTION_LENGTH,
  MAX_SLUG_LENGTH,
  MAX_TAGS,
  MAX_TAG_LENGTH,
  MAX_TITLE_LENGTH,
  POST_LIST_STATUSES,
  VISIBILITIES,
  MAX_ALT_LENGTH,
} from '../limits.js';
import { NullableString, PageQuery, PaginationSchema, SiteRef, StringEnum, Timestamp, envelope } from './common.js';

// More items than the limit are let through: duplicates are dropped before it is applied.
const Tags = Type.Array(Type.String({ maxLength: MAX_TAG_LENGTH }), { maxItems: 100, description: `De-duplicated, at most ${MAX_TAGS} distinct` });
const Title = Type.String({ minLength: 1, maxLength: MAX_TITLE_LENGTH });
const OptionalText = (maxLength: number) => Type.Optional(Type.Union([Type.String({ maxLength }), Type.Null()]));

// Fields a client may set on a post; create requires the title, PATCH any one of them.
const editableFields = {
  description: OptionalText(MAX_DESCRIPTION_LENGTH),
  content: OptionalText(MAX_CONTENT_LENGTH),
  category: OptionalText(MAX_CATEGORY_LENGTH),
  tags: Type.Optional(Tags),
  authorId: OptionalText(MAX_AUTHOR_ID_LENGTH),
  isDraft: Type.Optional(Type.Boolean()),
  featureImage: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()], { description: "The id of an image of the site's media library, shown with the post; null removes it" }),
  ),
  featureImageAlt: OptionalText(MAX_ALT_LENGTH),
  sendNewsletter: Type.Optional(
    Type.Boolean({ description: "Whether the first publication mails the post to the site's confirmed subscribers (default true; only while the site's newsletters are on)" }),
  ),
  commentsEnabled: Type.Optional(Type.Boolean({ description: 'Readers may comment (default true, when the site\'s comments are on); false closes them, keeping those there are' })),
  publishAt: Type.Optional(
    Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'ISO 8601 with an offset or Z, in the future: the draft is published then (publishedAt is this time). null cancels the schedule.',
    }),
  ),
};

export const CreatePostBody = Type.Object(
  { title: Title, ...editableFields },
  {
    examples: [
      {
        title: 'Brewing better coffee at home',
        description: 'Ratios, grind and water for a better cup.',
        content: '# Start with the ratio\n\nUse 60 grams of coffee per litre of water.',
        category: 'Coffee',
        tags: ['brewing', 'beginners'],
        isDraft: true,
      },
    ],
  },
);

export const PatchPostBody = Type.Object(
  {
    title: Type.Optional(Title),
    slug: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_SLUG_LENGTH, description: 'a-z, 0-9 and inner hyphens; the old URL of a published post redirects' })),
    ...editableFields,
    visibility: Type.Optional(StringEnum(VISIBILITIES)),
  },
  { minProperties: 1, examples: [{ title: 'Brewing great coffee at home', tags: ['brewing'], isDraft: false }] },
);

export const ListPostsQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(StringEnum(POST_LIST_STATUSES)),
  tag: Type.Optional(Type.String({ maxLength: MAX_TAG_LENGTH })),
  category: Type.Optional(Type.String({ maxLength: MAX_CATEGORY_LENGTH })),
  q: Type.Optional(Type.String({ maxLength: 200 })),
});

/** The post as create and generate return it (spec 4.1 / 4.2). */
export const PostSummary = Type.Object({
  id: Type.String({ format: 'uuid' }),
  slug: Type.String(),
  title: Type.String(),
  description: NullableString,
  category: NullableString,
  tags: Type.Array(Type.String()),
  authorId: NullableString,
  isDraft: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/** The post as retrieve returns it (spec 4.4, plus content, visibility and publishedAt). */
export const PostDetail = Type.Object({
  id: Type.String({ format: 'uuid' }),
  slug: Type.String(),
  title: Type.String(),
  description: NullableString,
  content: NullableString,
  category: NullableString,
  tags: Type.Array(Type.String()),
  cta: Type.Null(),
  authorId: NullableString,
  isDraft: Type.Boolean(),
  visibility: StringEnum(VISIBILITIES),
  publishedAt: Type.Union([Timestamp, Type.Null()]),
  publishAt: Type.Union([Timestamp, Type.Null()], { description: 'When a scheduled draft will be published; null when none is scheduled' }),
  featureImage: Type.Union([Type.String(), Type.Null()], { description: "The id of the post's feature image (GET /api/v1/media/:id has its URLs)" }),
  featureImageAlt: NullableString,
  reviewRequestedAt: Type.Union([Timestamp, Type.Null()], { description: 'When a contributor submitted the draft for review; null when not asked (or published since)' }),
  generatorProvider: Type.Union([StringEnum(['ollama', 'builtin']), Type.Null()], { description: 'Which writer generated the post: Ollama or the built-in writer; null for a post written by a person or client' }),
  generatorModel: Type.Union([Type.String(), Type.Null()], { description: "The Ollama model that wrote it (null for the built-in writer or a person's post)" }),
  sendNewsletter: Type.Boolean({ description: 'Whether the first publication mails the post to subscribers' }),
  commentsEnabled: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const PostCreatedResponse = envelope(Type.Object({ message: Type.String(), post: PostSummary, site: SiteRef }));
export const PostDetailResponse = envelope(Type.Object({ message: Type.String(), post: PostDetail, site: SiteRef }));
export const PostToggledResponse = envelope(
  Type.Object({
    message: Type.String(),
    post: Type.Object({ id: Type.String(), title: Type.String(), isDraft: Type.Boolean(), updatedAt: Timestamp }),
  }),
);
export const PostDeletedResponse = envelope(Type.Object({ message: Type.String(), postId: Type.String() }));
export const PostListResponse = envelope(Type.Object({ posts: Type.Array(PostDetail), pagination: PaginationSchema, site: SiteRef }));

export const PreviewPostBody = Type.Object(
  { content: Type.String({ maxLength: MAX_CONTENT_LENGTH, description: 'Markdown, as a post body holds it' }) },
  { examples: [{ content: '# Start with the ratio\n\nUse 60 grams of coffee per litre of water.' }] },
);
export const PreviewPostResponse = envelope(
  Type.Object({
    html: Type.String({ description: 'The body as the public page shows it: the same renderer, raw HTML escaped and unsafe links dropped' }),
    readingTime: Type.Integer({ description: 'Minutes, at least 1' }),
  }),
);
