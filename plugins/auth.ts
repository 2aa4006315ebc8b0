import bearerAuth from '@fastify/bearer-auth';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../src/errors.js';
import { KeyAuthenticator } from '../src/sites/key-cache.js';
import type { SiteRef } from '../src/sites/keys.js';

declare module 'fastify' {
  interface FastifyInstance {
    authenticator: KeyAuthenticator;
    /** onRequest hook for routes that need an API key: sets request.site or answers 401. */
    requireSite: onRequestHookHandler;
  }
  interface FastifyRequest {
    site: SiteRef;
  }
}

const unauthorized = () => new AppError(401, 'UNAUTHORIZED', 'A valid API key is required: Authorization: Bearer <API_KEY>');

export default fp(
  async function authPlugin(app: FastifyInstance) {
    const authenticator = new KeyAuthenticator(app.db, app.dbHandle.sqlite);
    app.decorate('authenticator', authenticator);
    app.decorateRequest('site', null as unknown as SiteRef);

    await app.register(bearerAuth, {
      keys: [],
      addHook: false,
      verifyErrorLogLevel: 'debug',
      auth(key, request) {
        const found = authenticator.authenticate(key);
        if (!found) return false;
        request.site = found.site;
        return true;
      },
    });

    app.decorate('requireSite', function requireSite(request, reply, done) {
      app.verifyBearerAuth!(request, reply, (error) => done(error ? unauthorized() : undefined));
    } as onRequestHookHandler);
  },
  { name: 'auth', dependencies: ['db'] },
);
