import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../src/errors.js';
import { AuthFailureBudget } from '../src/sites/auth-failures.js';
import type { AuthenticatedKey, SiteRef } from '../src/sites/rules.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** onRequest hook for routes that need an API key: sets request.site or answers 401. */
    requireSite: onRequestHookHandler;
    /** Whether the request carries a valid API key, for routes that need none but show more with one. */
    hasValidKey(request: FastifyRequest): Promise<boolean>;
  }
  interface FastifyRequest {
    site: SiteRef;
    /** The id of the API key that authenticated the request (what per-key rate limits count). */
    apiKeyId: string | null;
  }
}

const unauthorized = () => new AppError(401, 'UNAUTHORIZED', 'A valid API key is required: Authorization: Bearer <API_KEY>');

// `Bearer <key>`; the scheme name is case-insensitive in HTTP.
const BEARER = /^bearer\s+(\S+)\s*$/i;

/** The token of an `Authorization: Bearer <token>` header, or null. */
function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  return header === undefined ? null : (BEARER.exec(header)?.[1] ?? null);
}

export default fp(
  async function authPlugin(app: FastifyInstance) {
    app.decorateRequest('site', null as unknown as SiteRef);
    app.decorateRequest('apiKeyId', null);

    app.decorate('hasValidKey', async (request: FastifyRequest) => {
      const token = bearerToken(request);
      return token !== null && (await app.sites.authenticate(token)) !== undefined;
    });

    const { rateLimitAuthFailMax, rateLimitWindowMs } = app.config;
    const failures = new AuthFailureBudget(rateLimitAuthFailMax, rateLimitWindowMs);
    const windowSeconds = Math.round(rateLimitWindowMs / 1000);
    const refuse = (request: FastifyRequest) => {
      failures.fail(request.ip);
      return unauthorized();
    };

    app.decorate('requireSite', function requireSite(request, reply, done) {
      // An address that failed too often waits, before its key costs a hash and a lookup.
      const retryAfter = failures.retryAfter(request.ip);
      if (retryAfter > 0) {
        reply.header('Retry-After', String(retryAfter));
        return done(
          new AppError(429, 'RATE_LIMITED', `Too many failed authentications: at most ${failures.limit} per ${windowSeconds} s; retry in ${retryAfter} s`, {
            limit: failures.limit,
            windowSeconds,
            retryAfter,
          }),
        );
      }
      const token = bearerToken(request);
      if (token === null) return done(refuse(request));
      const accept = (found: AuthenticatedKey | undefined) => {
        if (!found) return done(refuse(request));
        request.site = found.site;
        request.apiKeyId = found.keyId;
        done();
      };
      // A failure looking the key up is a server fault and must not pass for a bad key: it
      // propagates to the error handler as it is. SQLite answers at once (no promise per request).
      let found;
      try {
        found = app.sites.authenticate(token);
      } catch (error) {
        return done(error as Error);
      }
      if (found instanceof Promise) found.then(accept, (error: Error) => done(error));
      else accept(found);
    } as onRequestHookHandler);
  },
  { name: 'auth', dependencies: ['sites'] },
);
