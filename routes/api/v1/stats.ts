import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { validationError } from '../../../src/errors.js';
import { statsRange } from '../../../src/analytics/rules.js';
import { IdParams, errorResponses } from '../../../src/schemas/common.js';
import { PostStatsQueryIds, PostStatsResponse, PostsStatsResponse, SiteStatsResponse, StatsQuery } from '../../../src/schemas/stats.js';

const tags = ['stats'];
const MAX_IDS = 100;

/** Stats of the site's public pages (see plugins/analytics.ts): days in the site's time zone. */
export default async function statsRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', app.requireSite);

  const rangeOf = async (siteId: string, query: { from?: string; to?: string }) => {
    const { timeZone } = await app.sites.get(siteId);
    return { timeZone, range: statsRange(query.from, query.to, app.analytics.today(timeZone)) };
  };

  app.get(
    '/stats',
    {
      schema: {
        tags,
        operationId: 'getStats',
        summary: 'Views and visitors per day, top posts, pages and referrers',
        description: 'Counted on the server from reads of the public pages (no cookie, no script; bots and prefetches not counted). At most 366 days.',
        querystring: StatsQuery,
        response: { 200: SiteStatsResponse, ...errorResponses },
      },
    },
    async (request) => {
      const { timeZone, range } = await rangeOf(request.site.id, request.query);
      const stats = await app.analytics.store.siteStats(request.site.id, range);
      return {
        success: true as const,
        data: {
          ...stats,
          timeZone,
          topPosts: stats.topPosts.map(({ page, ...row }) => ({ postId: page, ...row })),
          topPages: stats.topPages.map(({ page, ...row }) => ({ path: page, ...row })),
        },
      };
    },
  );

  app.get(
    '/stats/posts',
    {
      schema: {
        tags,
        operationId: 'getPostsStats',
        summary: 'Views and visitors of the given posts over a range (the post list shows them)',
        querystring: PostStatsQueryIds,
        response: { 200: PostsStatsResponse, ...errorResponses },
      },
    },
    async (request) => {
      const ids = [...new Set(request.query.ids.split(',').map((id) => id.trim()).filter(Boolean))];
      if (ids.length > MAX_IDS) throw validationError(`At most ${MAX_IDS} ids`, [{ path: '/query/ids', message: `at most ${MAX_IDS} ids` }]);
      const { range } = await rangeOf(request.site.id, request.query);
      const totals = await app.analytics.store.pageTotals(request.site.id, ids, range);
      return { success: true as const, data: { ...range, posts: totals.map(({ page, ...row }) => ({ postId: page, ...row })) } };
    },
  );

  app.get(
    '/posts/:id/stats',
    {
      schema: {
        tags,
        operationId: 'getPostStats',
        summary: "A post's views and visitors per day",
        params: IdParams,
        querystring: StatsQuery,
        response: { 200: PostStatsResponse, ...errorResponses },
      },
    },
    async (request) => {
      // Another site's post is not found, as everywhere.
      const post = await app.posts.get(request.site.id, request.params.id);
      const { timeZone, range } = await rangeOf(request.site.id, request.query);
      const stats = await app.analytics.store.pageStats(request.site.id, post.id, range);
      return { success: true as const, data: { postId: post.id, timeZone, ...stats } };
    },
  );
}
