import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../src/errors.js';

export type RateLimitPolicy = 'api' | 'generate' | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `generate`: the lower limit of AI generation (RATE_LIMIT_GENERATE_MAX) instead of the general one. */
    rateLimitGroup?: 'generate';
    /** Set by this plugin on every limited route: which limit applies (the OpenAPI document shows its headers). */
    rateLimitPolicy?: RateLimitPolicy;
  }
}

/**
 * Who a request counts against: its API key (requests authenticated by requireSite, which
 * runs before this), else the client's address (public pages, feeds, the content API,
 * /health).
 */
function rateKey(request: FastifyRequest): string {
  if (request.apiKeyId) return `key:${request.apiKeyId}`;
  // A signed-in person counts as a key does (RATE_LIMIT_MAX), per user.
  return request.userId ? `user:${request.userId}` : `ip:${request.ip}`;
}

/**
 * Rate limits with @fastify/rate-limit, in fixed windows of RATE_LIMIT_WINDOW_MS: per API key
 * (RATE_LIMIT_MAX; POST /posts/generate counts apart against RATE_LIMIT_GENERATE_MAX) and per
 * client address where there is no key (RATE_LIMIT_PUBLIC_MAX). Answers carry RateLimit-Limit,
 * RateLimit-Remaining and RateLimit-Reset; past the limit, 429 RATE_LIMITED with Retry-After
 * (the header, and `retryAfter` seconds in the envelope's details). A limit of 0 is none.
 * Routes registered before this plugin (the API reference under /docs) are not limited.
 */
export default fp(
  async function rateLimitPlugin(app: FastifyInstance) {
    const { rateLimitWindowMs: timeWindow, rateLimitMax, rateLimitGenerateMax, rateLimitPublicMax } = app.config;

    // Runs before the rate-limit plugin's own onRoute hook (registered below). Routes share the
    // global counters (one per key, one per address); generate gets a store of its own.
    app.addHook('onRoute', (route: RouteOptions) => {
      if (route.config?.rateLimit !== undefined) return;
      const policy: RateLimitPolicy = route.config?.rateLimitGroup === 'generate' ? 'generate' : /^\/api\//.test(route.url ?? '') ? 'api' : 'public';
      const max = policy === 'generate' ? rateLimitGenerateMax : policy === 'api' ? rateLimitMax : rateLimitPublicMax;
      const config: Record<string, unknown> = { ...route.config };
      if (max > 0) config.rateLimitPolicy = policy;
      if (policy === 'generate') config.rateLimit = max > 0 ? { max, timeWindow } : false;
      route.config = config as typeof route.config;
    });

    const maxFor = (key: string) => (key.startsWith('key:') || key.startsWith('user:') ? rateLimitMax : rateLimitPublicMax);
    await app.register(rateLimit, {
      global: true,
      hook: 'onRequest',
      enableDraftSpec: true,
      max: (_request, key) => maxFor(key),
      timeWindow,
      keyGenerator: rateKey,
      // A limit of 0 is none: such requests are not counted at all.
      allowList: (_request, key) => maxFor(key) === 0,
      // An installation's limits are in-process (one server per data folder): no store to share.
      cache: 10_000,
      errorResponseBuilder: (_request, context) => {
        const retryAfter = Math.max(1, Math.ceil(context.ttl / 1000));
        return new AppError(429, 'RATE_LIMITED', `Too many requests: at most ${context.max} per ${Math.round(timeWindow / 1000)} s; retry in ${retryAfter} s`, {
          limit: context.max,
          windowSeconds: Math.round(timeWindow / 1000),
          retryAfter,
        });
      },
    });
  },
  { name: 'rate-limit', dependencies: ['auth'] },
);
