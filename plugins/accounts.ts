import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { addressForLinks, type Config } from '../src/config.js';
import { cookieMaxAgeSeconds, SignInThrottle } from '../src/accounts/rules.js';
import { verifyPassword } from '../src/accounts/passwords.js';
import type { AccountStore, NewSession } from '../src/accounts/store.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Staff users, memberships, sessions and one-time links. */
    accounts: AccountStore;
    /** Failed sign-ins per email and per client address (in this process). */
    signInThrottle: SignInThrottle;
    /** The session cookie's name (see sessionCookieName). */
    sessionCookie: string;
    /** Sets the session cookie of a new session on the reply. */
    setSessionCookie(request: FastifyRequest, reply: FastifyReply, session: NewSession): void;
    clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void;
    /** Where the service's own pages are (setup links point there). */
    serviceBaseUrl: string;
  }
}

export const SESSION_COOKIE = 'blog_session';

/**
 * The session cookie's name: `__Host-blog_session` when the service is served over HTTPS
 * (PUBLIC_BASE_URL https), which a browser keeps only when it is Secure, for Path=/ and
 * without a Domain (a tenant's page elsewhere cannot set or widen it); plain `blog_session`
 * otherwise (plain-HTTP development, where no Secure cookie would be kept).
 */
export const sessionCookieName = (config: Pick<Config, 'publicOrigin'>) => (config.publicOrigin?.startsWith('https:') ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE);

const PURGE_INTERVAL_MS = 60 * 60_000;

/**
 * The base of links to the service's own pages (the admin UI): PUBLIC_BASE_URL's origin when
 * set, else http://HOST:PORT (localhost for a wildcard HOST).
 */
export function serviceBaseUrl(config: Pick<Config, 'publicOrigin' | 'host' | 'port'>): string {
  if (config.publicOrigin) return config.publicOrigin;
  return `http://${addressForLinks(config.host)}:${config.port}`;
}

export default fp(
  async function accountsPlugin(app: FastifyInstance) {
    const { config } = app;
    await app.register(cookie);
    const accounts = app.stores.accounts({ lifetimes: { idleMs: config.sessionIdleMs, maxMs: config.sessionMaxMs } });
    app.decorate<AccountStore>('accounts', accounts);
    app.decorate('signInThrottle', new SignInThrottle());
    // The stand-in hash an unknown email is checked against, made now: the first such sign-in costs what a wrong password does.
    void verifyPassword(null, '');
    app.decorate('serviceBaseUrl', serviceBaseUrl(config));

    // Sessions and links nobody comes back to go once an hour (and at start).
    const purge = async () => {
      try {
        const purged = await accounts.purgeEnded();
        if (purged > 0) app.log.info({ purged }, 'deleted ended sessions and used or expired one-time links');
      } catch (error) {
        app.log.warn({ err: error }, 'could not delete ended sessions');
      }
    };
    let purgeTimer: NodeJS.Timeout | null = null;
    app.addHook('onListen', async () => {
      void purge();
      purgeTimer = setInterval(() => void purge(), PURGE_INTERVAL_MS).unref();
    });
    app.addHook('onClose', async () => {
      if (purgeTimer) clearInterval(purgeTimer);
    });

    const name = sessionCookieName(config);
    app.decorate('sessionCookie', name);
    const alwaysSecure = name !== SESSION_COOKIE;
    const cookieOptions = (request: FastifyRequest) => ({
      path: '/',
      httpOnly: true,
      sameSite: 'lax' as const,
      // Always with the __Host- prefix; else when the request came over HTTPS (request.protocol
      // follows X-Forwarded-Proto only when TRUST_PROXY trusts the proxy).
      secure: alwaysSecure || request.protocol === 'https',
    });
    app.decorate('setSessionCookie', (request: FastifyRequest, reply: FastifyReply, session: NewSession) => {
      const now = Date.now();
      reply.setCookie(name, session.token, {
        ...cookieOptions(request),
        maxAge: cookieMaxAgeSeconds(session.expiresAt, now),
      });
    });
    app.decorate('clearSessionCookie', (request: FastifyRequest, reply: FastifyReply) => {
      reply.clearCookie(name, cookieOptions(request));
    });
  },
  { name: 'accounts', dependencies: ['db'] },
);
