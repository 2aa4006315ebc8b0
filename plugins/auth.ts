import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { forbidden, type Role, type SessionAuth } from '../src/accounts/rules.js';
import { AppError } from '../src/errors.js';
import { AuthFailureBudget } from '../src/sites/auth-failures.js';
import type { AuthenticatedKey, SiteRef } from '../src/sites/rules.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * onRequest hook for routes that need a credential: an API key (Authorization: Bearer) or a
     * staff session (the blog_session cookie). Sets request.site and the role, or answers 401
     * (403 for a state-changing cookie request from a foreign origin).
     */
    requireSite: onRequestHookHandler;
    /** onRequest hook after requireSite: 403 unless the request acts as an owner of its site (an API key does). */
    requireOwner: onRequestHookHandler;
    /** onRequest hook for routes only a signed-in person uses (its own session): sets request.session, or 401. */
    requireSession: onRequestHookHandler;
    /** Whether the request carries a valid API key, for routes that need none but show more with one. */
    hasValidKey(request: FastifyRequest): Promise<boolean>;
    /** 403 when a request's Origin (or Referer) names another origin than the service's own; `required`: also when it names none. */
    checkOrigin(request: FastifyRequest, required: boolean): void;
  }
  interface FastifyRequest {
    site: SiteRef;
    /** The id of the API key that authenticated the request (what per-key rate limits count). */
    apiKeyId: string | null;
    /** What the request may do on its site: an API key acts as owner. */
    role: Role;
    /** The signed-in user of a session request; null for an API key. */
    userId: string | null;
    /** The session of a cookie request; null for an API key. */
    session: SessionAuth | null;
  }
}

const unauthorized = () => new AppError(401, 'UNAUTHORIZED', 'A valid API key is required: Authorization: Bearer <API_KEY> (or a session: sign in)');
const noSession = () => new AppError(401, 'UNAUTHORIZED', 'Not signed in, or the session has ended: sign in again');

// `Bearer <key>`; the scheme name is case-insensitive in HTTP.
const BEARER = /^bearer\s+(\S+)\s*$/i;

/** The token of an `Authorization: Bearer <token>` header, or null. */
function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  return header === undefined ? null : (BEARER.exec(header)?.[1] ?? null);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The origin a request says it comes from: its Origin header, else its Referer's; null for neither (or `Origin: null`). */
function claimedOrigin(request: FastifyRequest): string | null {
  const claimed = request.headers.origin ?? request.headers.referer;
  return claimed === undefined ? null : originOf(claimed);
}

/** The origin of a URL as browsers write it (lower case, no default port); null for none (`null`, garbage). */
const originOf = (url: string): string | null => {
  if (!URL.canParse(url)) return null;
  const origin = new URL(url).origin;
  return origin === 'null' ? null : origin;
};

export default fp(
  async function authPlugin(app: FastifyInstance) {
    app.decorateRequest('site', null as unknown as SiteRef);
    app.decorateRequest('apiKeyId', null);
    // None until requireSite decides: requireOwner without it refuses.
    app.decorateRequest('role', null as unknown as Role);
    app.decorateRequest('userId', null);
    app.decorateRequest('session', null);

    app.decorate('hasValidKey', async (request: FastifyRequest) => {
      const token = bearerToken(request);
      return token !== null && (await app.sites.authenticate(token)) !== undefined;
    });

    // The service's own origin: PUBLIC_BASE_URL's when set, else the request's own (its scheme
    // and Host, as TRUST_PROXY lets Fastify read them).
    const { publicOrigin } = app.config;
    const ownOrigin = (request: FastifyRequest) => publicOrigin ?? originOf(`${request.protocol}://${request.host}`);
    const foreignOrigin = () => forbidden('Cross-site request refused: it must come from the service\'s own pages (Origin)');
    app.decorate('checkOrigin', (request: FastifyRequest, required: boolean) => {
      const claimed = claimedOrigin(request);
      // An Origin the service cannot read (`null`, garbage) is no proof of being its own.
      const present = request.headers.origin !== undefined || request.headers.referer !== undefined;
      if (claimed === null ? required || present : claimed !== ownOrigin(request)) throw foreignOrigin();
    });

    const { rateLimitAuthFailMax, rateLimitWindowMs } = app.config;
    const failures = new AuthFailureBudget(rateLimitAuthFailMax, rateLimitWindowMs);
    const windowSeconds = Math.round(rateLimitWindowMs / 1000);
    const refuse = (request: FastifyRequest, error = unauthorized()) => {
      failures.fail(request.ip);
      return error;
    };
    /** 429 (and its Retry-After) for an address that failed too often, before its credential costs a lookup; null to go on. */
    const throttled = (request: FastifyRequest, reply: FastifyReply): AppError | null => {
      const retryAfter = failures.retryAfter(request.ip);
      if (retryAfter <= 0) return null;
      reply.header('Retry-After', String(retryAfter));
      return new AppError(429, 'RATE_LIMITED', `Too many failed authentications: at most ${failures.limit} per ${windowSeconds} s; retry in ${retryAfter} s`, {
        limit: failures.limit,
        windowSeconds,
        retryAfter,
      });
    };

    /** Authenticates by the session cookie: its state-changing requests only from the service's own origin. */
    const bySession = (request: FastifyRequest, token: string, done: (error?: Error) => void) => {
      if (!SAFE_METHODS.has(request.method)) {
        try {
          app.checkOrigin(request, true);
        } catch (error) {
          return done(error as Error);
        }
      }
      app.accounts.authenticate(token).then((auth) => {
        if (!auth) return done(refuse(request, noSession()));
        request.site = { id: auth.site.id, name: auth.site.name };
        request.role = auth.role;
        request.userId = auth.userId;
        request.session = auth;
        done();
      }, done);
    };

    app.decorate('requireSite', function requireSite(request, reply, done) {
      // An address that failed too often waits, before its key costs a hash and a lookup.
      const wait = throttled(request, reply);
      if (wait) return done(wait);
      const token = bearerToken(request);
      if (token === null) {
        // A request carrying both uses the key; without one, the session cookie.
        const cookie = request.cookies?.[app.sessionCookie];
        if (cookie) return bySession(request, cookie, done);
        return done(refuse(request));
      }
      const accept = (found: AuthenticatedKey | undefined) => {
        if (!found) return done(refuse(request));
        request.site = found.site;
        request.apiKeyId = found.keyId;
        request.role = 'owner';
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

    app.decorate('requireSession', function requireSession(request, reply, done) {
      const wait = throttled(request, reply);
      if (wait) return done(wait);
      const cookie = request.cookies?.[app.sessionCookie];
      if (!cookie) return done(noSession());
      bySession(request, cookie, done);
    } as onRequestHookHandler);

    app.decorate('requireOwner', function requireOwner(request, _reply, done) {
      if (request.role !== 'owner') return done(forbidden());
      done();
    } as onRequestHookHandler);
  },
  { name: 'auth', dependencies: ['sites', 'accounts'] },
);
