import { Type } from '@sinclair/typebox';
import { MAX_EMAIL_LENGTH } from '../newsletters/rules.js';
import { SUBSCRIBER_SOURCES, SUBSCRIBER_STATUSES } from '../newsletters/statuses.js';
import { NullableString, PageQuery, PaginationSchema, SiteRef, StringEnum, Timestamp, envelope } from './common.js';

export const Subscriber = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String({ description: 'Folded to lower case' }),
  status: StringEnum(SUBSCRIBER_STATUSES, '`pending` until confirmed; only `active` addresses receive posts; `bouncing` after 3 permanent refusals'),
  consentSource: StringEnum(SUBSCRIBER_SOURCES, 'How consent was given: the public form, the content API, or an import by staff'),
  consentedAt: Type.Union([Timestamp, Type.Null()], { description: 'When the address was confirmed (or imported)' }),
  bounces: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Counts = Type.Object(
  Object.fromEntries(SUBSCRIBER_STATUSES.map((status) => [status, Type.Integer()])) as Record<(typeof SUBSCRIBER_STATUSES)[number], ReturnType<typeof Type.Integer>>,
  { description: 'Subscribers of the site by status (whatever the filter)' },
);

export const SubscriberListQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(StringEnum(SUBSCRIBER_STATUSES)),
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Part of the address' })),
});

export const SubscriberListResponse = envelope(Type.Object({ subscribers: Type.Array(Subscriber), counts: Counts, pagination: PaginationSchema, site: SiteRef }));
export const SubscribersOverTimeResponse = envelope(
  Type.Object({
    from: Type.String(),
    to: Type.String(),
    timeZone: Type.String(),
    active: Type.Integer({ description: 'Active subscribers now' }),
    days: Type.Array(
      Type.Object({
        day: Type.String({ description: "YYYY-MM-DD in the site's time zone" }),
        subscribed: Type.Integer({ description: 'Sign-ups confirmed (or imported) that day' }),
        unsubscribed: Type.Integer({ description: 'Subscribers who left that day (and have not come back)' }),
      }),
      { description: 'Every day of the range, oldest first' },
    ),
  }),
);
export const SubscriberDeletedResponse = envelope(Type.Object({ message: Type.String(), subscriberId: Type.String() }));

export const SubscriberImportBody = Type.Object(
  { file: Type.String({ format: 'binary', description: 'CSV, UTF-8: a column named `email` (or the addresses in the first column), one address a line, at most 50,000' }) },
  { description: 'multipart/form-data with exactly one part, named "file"' },
);
export const SubscriberImportResponse = envelope(
  Type.Object({
    message: Type.String(),
    imported: Type.Integer({ description: 'Addresses added as active subscribers (consent vouched for by the importer)' }),
    problems: Type.Array(
      Type.Object({
        line: Type.Integer({ description: 'Line of the file, from 1 (the header is line 1)' }),
        email: Type.String(),
        reason: StringEnum(['invalid', 'duplicate', 'exists'] as const, '`invalid`: not an address; `duplicate`: earlier in the file; `exists`: already a subscriber'),
      }),
      { description: 'Lines not imported, in order' },
    ),
  }),
);

export const NewsletterProgress = Type.Object({
  status: StringEnum(['none', 'sending', 'sent'] as const, '`none`: the post has no newsletter (not published yet, newsletters off, or opted out)'),
  recipients: Type.Integer({ description: 'Confirmed subscribers when the post was first published' }),
  sent: Type.Integer(),
  failed: Type.Integer({ description: 'Given up after repeated temporary failures' }),
  bounced: Type.Integer({ description: 'Refused for good by the receiving server' }),
  createdAt: Type.Union([Timestamp, Type.Null()]),
  finishedAt: Type.Union([Timestamp, Type.Null()]),
});
export const NewsletterProgressResponse = envelope(Type.Object({ newsletter: NewsletterProgress }));

export const SubscribeBody = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: MAX_EMAIL_LENGTH }) },
  { additionalProperties: true, examples: [{ email: 'reader@example.com' }] },
);
export const SubscribeResponse = envelope(Type.Object({ message: Type.String() }));
export { NullableString };

/** A reader's sign-up through the content API (headless front ends). */
export const PublicSubscribeBody = Type.Object({
  email: Type.String({ maxLength: 1000, description: 'The address to subscribe' }),
  altcha: Type.Optional(Type.String({ maxLength: 8000, description: "The proof-of-work widget's answer to a challenge of GET /content/v1/sites/{handle}/challenge?form=subscribe; without it the sign-up is still taken, as from a browser without JavaScript" })),
  website: Type.Optional(Type.String({ maxLength: 1000, description: 'The honeypot: leave it out or empty' })),
}, { examples: [{ email: 'reader@example.com' }] });
export const PublicSubscribeResponse = envelope(Type.Object({ message: Type.String() }));
export const NewsletterTestResponse = envelope(Type.Object({ message: Type.String(), to: Type.String({ description: "The signed-in person's address" }), jobId: Type.String({ description: "The mail job's id" }) }));
