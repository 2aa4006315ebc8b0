import { Type } from '@sinclair/typebox';
import { NullableString, PageQuery, PaginationSchema, SiteRef, Timestamp, envelope } from './common.js';

const Tags = Type.Array(Type.String({ maxLength: 50 }), { maxItems: 100, description: 'De-duplicated, at most 20 distinct' });
const Title = Type.String({ minLength: 1, maxLength: 300 });
const OptionalText = (maxLength: number) => Type.Optional(Type.Union([Type.String({ maxLength }), Type.Null()]));

// Fields a client may set on a post; create requires the title, PATCH any one of them.
const editableFields = {
  description: OptionalText(2000),
  content: OptionalText(1_000_000),
  category: OptionalText(100),
  tags: Type.Optional(Tags),
  authorId: OptionalText(100),
  isDraft: Type.Optional(Type.Boolean()),
};

export const CreatePostBody = Type.Object({ title: Title, ...editableFields });

export const PatchPostBody = Type.Object(
  {
    title: Type.Optional(Title),
    ...editableFields,
    visibility: Type.Optional(Type.Union([Type.Literal('public'), Type.Literal('unlisted')])),
  },
  { minProperties: 1 },
);

export const ListPostsQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(Type.Union([Type.Literal('draft'), Type.Literal('published'), Type.Literal('unlisted'), Type.Literal('all')])),
  tag: Type.Optional(Type.String({ maxLength: 50 })),
  category: Type.Optional(Type.String({ maxLength: 100 })),
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
  visibility: Type.Union([Type.Literal('public'), Type.Literal('unlisted')]),
  publishedAt: Type.Union([Timestamp, Type.Null()]),
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
