import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { viewsFolder } from '../src/public-site/templates.js';
import { SpamGuard } from '../src/spam-guard/guard.js';

declare module 'fastify' {
  interface FastifyInstance {
    spamGuard: SpamGuard;
  }
}

export interface SpamGuardPluginOptions {
  /** Milliseconds since the epoch (tests). */
  clock?: () => number;
}

/** Where the widget's files are served, on every host (a site's own domain too). */
export const SPAM_GUARD_ASSETS = '/spam-guard';
/** How long a challenge may be answered: time enough to write a comment. */
const CHALLENGE_TTL_MS = 2 * 3_600_000;
const PURGE_INTERVAL_MS = 15 * 60_000;

interface Asset {
  body: Buffer;
  contentType: string;
  etag: string;
}

function asset(file: string, contentType: string): Asset {
  const body = fs.readFileSync(file);
  return { body, contentType, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
}

/** The widget's files from the `altcha` package (its CSP-friendly build: styles and workers apart), and the page's module that loads them. */
function widgetAssets(): Map<string, Asset> {
  const external = path.dirname(fileURLToPath(import.meta.resolve('altcha/external')));
  const js = 'text/javascript; charset=utf-8';
  return new Map([
    ['altcha.js', asset(path.join(external, 'altcha.min.js'), js)],
    ['altcha.css', asset(path.join(external, 'altcha.css'), 'text/css; charset=utf-8')],
    ['sha-worker.js', asset(path.join(external, '..', 'workers', 'sha.js'), js)],
    ['spam-guard.js', asset(path.join(viewsFolder(), 'forms', 'spam-guard.js'), js)],
    ['comments.js', asset(path.join(viewsFolder(), 'forms', 'comments.js'), js)],
  ]);
}

/**
 * The spam guard of the public forms (src/spam-guard), with the configuration's difficulty
 * and limits; serves the widget's files under /spam-guard/ and forgets expired challenges
 * and finished windows every quarter of an hour.
 */
export default fp(
  async function spamGuardPlugin(app: FastifyInstance, opts: SpamGuardPluginOptions) {
    const { config } = app;
    const guard = app.stores.spamGuard({
      difficulty: config.spamGuardDifficulty,
      challengeTtlMs: CHALLENGE_TTL_MS,
      minFillMs: config.spamGuardMinFillMs,
      rateMax: config.spamGuardRateMax,
      rateWindowMs: config.spamGuardRateWindowMs,
      clock: opts.clock,
    });
    app.decorate('spamGuard', guard);

    const assets = widgetAssets();
    app.get(`${SPAM_GUARD_ASSETS}/:file`, { schema: { hide: true } }, async (request, reply) => {
      const found = assets.get((request.params as { file: string }).file);
      if (!found) return reply.callNotFound();
      reply.header('Cache-Control', 'public, max-age=86400').header('ETag', found.etag);
      if (request.headers['if-none-match'] === found.etag) return reply.code(304).send();
      return reply.type(found.contentType).send(found.body);
    });

    let timer: NodeJS.Timeout | null = null;
    app.addHook('onReady', async () => {
      timer = setInterval(() => {
        guard.purge().catch((error: unknown) => app.log.warn({ err: error }, 'spam guard: purge failed'));
      }, PURGE_INTERVAL_MS).unref();
    });
    app.addHook('onClose', async () => {
      if (timer) clearInterval(timer);
    });
  },
  { name: 'spam-guard', dependencies: ['db'] },
);
