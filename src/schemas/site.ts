import { Type } from '@sinclair/typebox';
import { COMMENT_MODES, MAX_HANDLE_LENGTH, MAX_POSTS_PER_PAGE, MAX_SITE_DESCRIPTION_LENGTH, MAX_SITE_NAME_LENGTH, MIN_HANDLE_LENGTH } from '../limits.js';
import { MAX_NEWSLETTER_FOOTER_LENGTH, MAX_SENDER_NAME_LENGTH } from '../sites/rules.js';
import { NullableString, StringEnum, envelope } from './common.js';
import { MAX_BLOCKED_WORD_LENGTH, MAX_BLOCKED_WORDS } from '../spam-guard/rules.js';

/** A site's settings as GET and PATCH /api/v1/site answer them. */
export const SiteSettings = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  description: NullableString,
  handle: Type.String({ description: 'Pages at /sites/<handle>/' }),
  url: NullableString,
  language: Type.String({ description: 'BCP 47 tag of the pages' }),
  postsPerPage: Type.Integer(),
  timeZone: Type.String({ description: 'IANA time zone name (default UTC): the days of the site\'s stats' }),
  newsletter: Type.Object(
    {
      enabled: Type.Boolean({ description: 'Readers may subscribe, and first publications are mailed to confirmed subscribers' }),
      senderName: Type.Union([Type.String(), Type.Null()], { description: "The From name of newsletter mails (the site's name when null)" }),
      replyTo: Type.Union([Type.String(), Type.Null()], { description: 'The Reply-To address of newsletter mails' }),
      footer: Type.Union([Type.String(), Type.Null()], { description: 'A line at the foot of every newsletter mail' }),
    },
    { description: 'Newsletter settings' },
  ),
  comments: StringEnum(COMMENT_MODES, "Readers' comments: `off`, `moderated` (each waits for approval; the default) or `open` (published at once when its author's earlier comment on the site was approved)"),
  blockedWords: Type.Array(Type.String(), { description: 'Words and phrases that mark a comment as spam (whole words; case and accents ignored)' }),
  publicUrl: Type.String({ description: 'Where readers find the site: its url once proven, else PUBLIC_BASE_URL/sites/<handle>' }),
  domain: Type.Union(
    [
      Type.Object({
        host: Type.String(),
        status: StringEnum(['pending', 'verified'], '`pending` until the host is proven: only then does it serve the site'),
        verification: Type.Union([
          Type.Object(
            { type: Type.Literal('TXT'), name: Type.String({ description: '_blog-verify.<host>' }), value: Type.String({ description: 'The token the record must hold' }) },
            { description: 'The DNS record that proves the domain, while pending' },
          ),
          Type.Null(),
        ]),
      }),
      Type.Null(),
    ],
    { description: 'The state of the site’s own domain (its url); null without one' },
  ),
});

export const PatchSiteBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_SITE_NAME_LENGTH })),
    description: Type.Optional(Type.Union([Type.String({ maxLength: MAX_SITE_DESCRIPTION_LENGTH }), Type.Null()])),
    handle: Type.Optional(Type.String({ minLength: MIN_HANDLE_LENGTH, maxLength: MAX_HANDLE_LENGTH })),
    url: Type.Optional(Type.Union([Type.String({ maxLength: 300, description: 'An origin such as https://blog.example.com; null to remove' }), Type.Null()])),
    language: Type.Optional(Type.String({ minLength: 2, maxLength: 35 })),
    postsPerPage: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_POSTS_PER_PAGE })),
    timeZone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone name, such as UTC or Europe/Berlin' })),
    newsletter: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          senderName: Type.Optional(Type.Union([Type.String({ maxLength: MAX_SENDER_NAME_LENGTH }), Type.Null()])),
          replyTo: Type.Optional(Type.Union([Type.String({ maxLength: 254 }), Type.Null()])),
          footer: Type.Optional(Type.Union([Type.String({ maxLength: MAX_NEWSLETTER_FOOTER_LENGTH }), Type.Null()])),
        },
        { minProperties: 1, description: 'Newsletter settings to change' },
      ),
    ),
    comments: Type.Optional(StringEnum(COMMENT_MODES)),
    blockedWords: Type.Optional(Type.Array(Type.String({ maxLength: MAX_BLOCKED_WORD_LENGTH }), { maxItems: MAX_BLOCKED_WORDS })),
  },
  { minProperties: 1, examples: [{ name: 'Travel Notes', handle: 'travel', url: 'https://travel.example.com', language: 'en-GB', postsPerPage: 10, timeZone: 'Europe/London' }] },
);

export const SiteSettingsResponse = envelope(Type.Object({ message: Type.String(), site: SiteSettings }));
