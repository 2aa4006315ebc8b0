import { Type } from '@sinclair/typebox';
import { MAX_STATS_DAYS } from '../analytics/rules.js';
import { NullableString, envelope } from './common.js';

const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: "A day YYYY-MM-DD in the site's time zone" });

export const StatsQuery = Type.Object({
  from: Type.Optional(Type.String({ ...Day, description: `First day (YYYY-MM-DD, site's time zone); default: 29 days before \`to\`. At most ${MAX_STATS_DAYS} days in all` })),
  to: Type.Optional(Type.String({ ...Day, description: "Last day, included (YYYY-MM-DD); default: today in the site's time zone" })),
});

export const PostStatsQueryIds = Type.Object({
  ...StatsQuery.properties,
  ids: Type.String({ minLength: 1, maxLength: 4000, description: 'Post ids, comma-separated (at most 100)' }),
});

const DayCount = Type.Object({ day: Type.String(), views: Type.Integer(), visitors: Type.Integer({ description: 'Distinct readers that day' }) });
const Totals = Type.Object(
  { views: Type.Integer(), visitors: Type.Integer({ description: "The sum of each day's visitors (a reader on two days counts twice)" }) },
  { description: 'Over the range' },
);

export const SiteStatsResponse = envelope(
  Type.Object({
    from: Type.String(),
    to: Type.String(),
    timeZone: Type.String(),
    days: Type.Array(DayCount, { description: 'Every day of the range, oldest first' }),
    totals: Totals,
    topPosts: Type.Array(Type.Object({ postId: Type.String(), title: NullableString, slug: NullableString, views: Type.Integer(), visitors: Type.Integer() }), {
      description: 'Posts by views (title and slug null once deleted)',
    }),
    topPages: Type.Array(Type.Object({ path: Type.String(), views: Type.Integer(), visitors: Type.Integer() }), { description: 'Index, tag and category pages by views' }),
    topReferrers: Type.Array(Type.Object({ referrer: Type.String({ description: 'A host, a utm_source, or "" for direct / internal' }), views: Type.Integer() })),
  }),
);

export const PostStatsResponse = envelope(
  Type.Object({ postId: Type.String(), from: Type.String(), to: Type.String(), timeZone: Type.String(), days: Type.Array(DayCount), totals: Totals }),
);

export const PostsStatsResponse = envelope(
  Type.Object({
    from: Type.String(),
    to: Type.String(),
    posts: Type.Array(Type.Object({ postId: Type.String(), views: Type.Integer(), visitors: Type.Integer({ description: "The sum of each day's visitors" }) })),
  }),
);
