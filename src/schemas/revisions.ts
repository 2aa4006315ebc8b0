import { Type } from '@sinclair/typebox';
import { MAX_CONTENT_LENGTH, MAX_DESCRIPTION_LENGTH, MAX_TITLE_LENGTH } from '../limits.js';
import { NullableString, StringEnum, Timestamp, envelope } from './common.js';
import { PostDetail } from './posts.js';

export const RevisionParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }), revId: Type.String({ minLength: 1, maxLength: 100 }) });

export const Revision = Type.Object({
  id: Type.String({ format: 'uuid' }),
  title: Type.String(),
  description: NullableString,
  content: NullableString,
  authorId: Type.Union([Type.String(), Type.Null()], { description: 'Who saved it: a user id; null for an API key or the service' }),
  authorName: Type.Union([Type.String(), Type.Null()], { description: "That user's display name, else email" }),
  kind: StringEnum(['save', 'pending', 'restore'], '`save`: the post saved; `pending`: a published post\'s edits saved to wait for Update; `restore`: a revision put back'),
  createdAt: Timestamp,
});

export const RevisionListResponse = envelope(Type.Object({ revisions: Type.Array(Revision, { description: 'Newest first; the last 50 are kept' }) }));

export const PendingChange = Type.Object({
  title: Type.String(),
  description: NullableString,
  content: NullableString,
  authorId: NullableString,
  updatedAt: Timestamp,
});

export const PendingResponse = envelope(
  Type.Object({
    pending: Type.Union([PendingChange, Type.Null()], { description: 'The edits waiting for Update; null when none' }),
    etag: Type.String({ description: 'What a save of the pending change sends as If-Match (also the ETag header)' }),
  }),
);

export const PendingBody = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TITLE_LENGTH })),
    description: Type.Optional(Type.Union([Type.String({ maxLength: MAX_DESCRIPTION_LENGTH }), Type.Null()])),
    content: Type.Optional(Type.Union([Type.String({ maxLength: MAX_CONTENT_LENGTH }), Type.Null()])),
  },
  { minProperties: 1, examples: [{ title: 'Brewing great coffee at home', content: '# Start with the ratio\n\n60 g per litre.' }] },
);

export const RestoreResponse = envelope(
  Type.Object({
    message: Type.String(),
    post: PostDetail,
    pending: Type.Union([PendingChange, Type.Null()], { description: "For a published post, the pending change now holding the revision's text" }),
  }),
);

export const ShareResponse = envelope(
  Type.Object({
    url: Type.Union([Type.String(), Type.Null()], { description: 'The share-preview link (path on this service); null when none is active' }),
    token: Type.Union([Type.String(), Type.Null()]),
  }),
);

export const MessageResponse = envelope(Type.Object({ message: Type.String() }));
