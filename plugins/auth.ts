import bearerAuth from '@fastify/bearer-auth';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../src/errors.js';
import type { SiteRef } from '../src/sites/keys.js';

declare module 'fastify' {
  interface FastifyInstance {
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
    app.decorateRequest('site', null as unknown as SiteRef);

    await app.register(bearerAuth, {
      keys: [],
      addHook: false,
      // The scheme name is case-insensitive in HTTP: accept `bearer` as well as `Bearer`.
      specCompliance: 'rfc6749',
      verifyErrorLogLevel: 'debug',
      auth(key, request) {
        const found = app.sites.authenticate(key);
        if (!found) return false;
        request.site = found.site;
        return true;
      },
    });

    app.decorate('requireSite', function requireSite(request, reply, done) {
      app.verifyBearerAuth!(request, reply, (error) => {
        // The plugin's own refusals (missing, malformed, unknown key) are 401; anything else
        // thrown while looking the key up is a server fault and must not pass for a bad key.
        if (!error) return done();
        done((error as { code?: string }).code?.startsWith('FST_BEARER_AUTH') ? unauthorized() : error);
      });
    } as onRequestHookHandler);
  },
  { name: 'auth', dependencies: ['sites'] },
);
