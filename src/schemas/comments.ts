import { Type } from '@sinclair/typebox';
import { COMMENT_STATUSES, MAX_COMMENT_BODY_LENGTH, MAX_COMMENT_EMAIL_LENGTH, MAX_COMMENT_NAME_LENGTH } from '../limits.js';
import { NullableString, PageQuery, PaginationSchema, StringEnum, Timestamp, envelope } from './common.js';

const commentMembers = {
  id: Type.String({ format: 'uuid' }),
  postId: Type.String({ format: 'uuid' }),
  parentId: Type.Union([Type.String(), Type.Null()], { description: 'The comment this one replies to (one level deep)' }),
  authorName: Type.String(),
  body: Type.String({ description: 'As typed (plain text)' }),
  html: Type.String({ description: 'The body as the page shows it: escaped, paragraphs and line breaks kept, web addresses linked (rel="nofollow ugc noopener")' }),
  byStaff: Type.Boolean({ description: "Written as the site's by its staff" }),
  createdAt: Timestamp,
};

/** A comment as readers see it: never an email. */
export const PublicComment = Type.Object(commentMembers);

export const SubmittedComment = Type.Object({
  ...commentMembers,
  status: StringEnum(['pending', 'approved'] as const, '`approved`: shown now; `pending`: waits for a moderator'),
});

export const StaffComment = Type.Object({
  ...commentMembers,
  status: StringEnum(COMMENT_STATUSES),
  heldFor: Type.Union([Type.String(), Type.Null()], { description: 'Why the spam guard or a rule held it or marked it spam ("5 links")' }),
  authorEmail: Type.Union([Type.String(), Type.Null()], { description: 'Kept only to recognise a returning commenter; never shown to readers' }),
  post: Type.Object({ id: Type.String(), title: NullableString, slug: NullableString }),
});

export const PublicCommentsResponse = envelope(Type.Object({ comments: Type.Array(PublicComment), pagination: PaginationSchema }));

export const SubmitCommentBody = Type.Object(
  {
    name: Type.String({ maxLength: 1000, description: `1-${MAX_COMMENT_NAME_LENGTH} characters` }),
    email: Type.Optional(Type.Union([Type.String({ maxLength: 1000, description: `Optional, never shown (at most ${MAX_COMMENT_EMAIL_LENGTH} characters)` }), Type.Null()])),
    body: Type.String({ maxLength: 20_000, description: `1-${MAX_COMMENT_BODY_LENGTH} characters, plain text` }),
    parentId: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
    altcha: Type.Optional(Type.String({ maxLength: 10_000, description: 'The spam guard widget\'s answer to a challenge of GET /content/v1/sites/{handle}/challenge?form=comment; without it the comment waits for a moderator' })),
    website: Type.Optional(Type.String({ maxLength: 1000, description: 'Leave empty (a honeypot)' })),
  },
  { examples: [{ name: 'Ada', email: 'ada@example.com', body: 'Thanks, this helped.' }] },
);
export const SubmittedCommentResponse = envelope(Type.Object({ message: Type.String(), comment: SubmittedComment }));

export const CommentListQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(StringEnum(COMMENT_STATUSES)),
  postId: Type.Optional(Type.String({ maxLength: 100 })),
});
export const CommentListResponse = envelope(Type.Object({ comments: Type.Array(StaffComment), pagination: PaginationSchema, pending: Type.Integer({ description: "The site's pending comments (the navigation's count)" }) }));
export const PatchCommentBody = Type.Object({ status: StringEnum(COMMENT_STATUSES) }, { examples: [{ status: 'approved' }] });
export const CommentResponse = envelope(Type.Object({ message: Type.String(), comment: StaffComment }));
export const CommentDeletedResponse = envelope(Type.Object({ message: Type.String(), commentId: Type.String() }));
export const StaffReplyBody = Type.Object({
  body: Type.String({ minLength: 1, maxLength: MAX_COMMENT_BODY_LENGTH }),
  parentId: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
}, { examples: [{ body: 'Thanks for reading: the follow-up post is on its way.' }] });
export const EraseEmailBody = Type.Object({ email: Type.String({ minLength: 3, maxLength: MAX_COMMENT_EMAIL_LENGTH }) }, { examples: [{ email: 'reader@example.com' }] });
export const EraseEmailResponse = envelope(Type.Object({ message: Type.String(), erased: Type.Integer({ description: 'Comments that held the email' }) }));

export const CommentMailBody = Type.Object({ enabled: Type.Boolean({ description: 'Mail me when comments wait (at most one mail per post an hour)' }) }, { examples: [{ enabled: false }] });
export const CommentMailResponse = envelope(
  Type.Object({
    enabled: Type.Boolean({ description: 'Whether the signed-in person is mailed when comments wait on this site (by default: owners yes, editors no)' }),
    mailConfigured: Type.Boolean({ description: 'Whether the service can send mail at all (SMTP_URL)' }),
  }),
);
