import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../../src/errors.js';
import { errorResponses } from '../../../src/schemas/common.js';
import { AcceptBody, ChangePasswordBody, ForgotBody, MessageResponse, ProfileBody, SessionResponse, SetupBody, SignInBody, SignedInResponse, SwitchSiteBody } from '../../../src/schemas/accounts.js';
import { deliverReset } from '../../../src/accounts/delivery.js';
import { SignInThrottle } from '../../../src/accounts/rules.js';

const tags = ['auth'];
/** Routes of a person's own session: the cookie alone. */
const session = [{ sessionCookie: [] }];

/** Signing in and out, the session, one-time setup links and password changes of staff users. */
export default async function authRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/auth/sign-in',
    {
      schema: {
        tags,
        operationId: 'signIn',
        summary: 'Sign in with email and password (sets the blog_session cookie)',
        description:
          'One answer (401) for an unknown email and a wrong password. Each attempt counts as it arrives (a right password takes it back): past 5 for one email from one address, 50 for one email from any address, or 20 from one address within 15 minutes, 429 with Retry-After. 429 with Retry-After too when too many passwords are being checked at once.',
        security: [],
        body: SignInBody,
        response: { 200: SignedInResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      app.checkOrigin(request, false);
      const email = request.body.email.trim().toLowerCase();
      // Counted now, before the password is checked: attempts sent at once cannot all pass.
      const { retryAfter, attempt } = app.signInThrottle.begin(email, request.ip);
      if (!attempt) {
        request.log.warn({ email, address: request.ip, retryAfter }, 'sign-in refused: too many failures');
        reply.header('Retry-After', String(retryAfter));
        throw new AppError(429, 'RATE_LIMITED', `Too many failed sign-ins: try again in ${retryAfter} s`, { retryAfter });
      }
      let session;
      try {
        session = await app.accounts.signIn(email, request.body.password);
      } catch (error) {
        if (error instanceof AppError && error.statusCode === 401) request.log.warn({ email, address: request.ip }, 'sign-in failed');
        else attempt.cancel();
        throw error;
      }
      attempt.succeed();
      request.log.info({ userId: session.auth.userId }, 'signed in');
      app.setSessionCookie(request, reply, session);
      return { success: true as const, data: { message: 'Signed in', session: await app.accounts.describe(session.auth) } };
    },
  );

  app.get(
    '/auth/session',
    { onRequest: app.requireSession, schema: { tags, security: session, operationId: 'getSession', summary: 'The signed-in user, the current site and role', response: { 200: SessionResponse, ...errorResponses } } },
    async (request) => ({ success: true as const, data: { session: await app.accounts.describe(request.session!) } }),
  );

  app.post(
    '/auth/sign-out',
    {
      schema: {
        tags,
        security: session,
        operationId: 'signOut',
        summary: 'End the session (on the server too) and clear its cookie',
        description: 'Answers 200 also when the session had already ended (the cookie is cleared either way); 403 from a foreign origin.',
        response: { 200: MessageResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const token = request.cookies[app.sessionCookie];
      if (token) {
        app.checkOrigin(request, true);
        const auth = await app.accounts.authenticate(token);
        if (auth) await app.accounts.signOut(auth.sessionId);
      }
      app.clearSessionCookie(request, reply);
      return { success: true as const, data: { message: 'Signed out' } };
    },
  );

  app.put(
    '/auth/session/site',
    {
      onRequest: app.requireSession,
      schema: { tags, security: session, operationId: 'switchSite', summary: 'Switch the session to another site of the user', body: SwitchSiteBody, response: { 200: SessionResponse, ...errorResponses } },
    },
    async (request) => {
      const auth = await app.accounts.switchSite(request.session!, request.body.siteId);
      return { success: true as const, data: { session: await app.accounts.describe(auth) } };
    },
  );

  app.post(
    '/auth/setup',
    {
      schema: {
        tags,
        operationId: 'setUpPassword',
        summary: 'Use a one-time setup or reset link: set the password and sign in',
        description: 'The link works once, within 24 hours (400 INVALID_TOKEN otherwise). Every other session of the user ends.',
        security: [],
        body: SetupBody,
        response: { 200: SignedInResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      app.checkOrigin(request, false);
      const session = await app.accounts.useLink(request.body.token, request.body.password);
      request.log.info({ userId: session.auth.userId }, 'password set through a one-time link');
      app.setSessionCookie(request, reply, session);
      return { success: true as const, data: { message: 'Password set: you are signed in', session: await app.accounts.describe(session.auth) } };
    },
  );

  app.patch(
    '/auth/profile',
    {
      onRequest: app.requireSession,
      schema: { tags, security: session, operationId: 'updateProfile', summary: "Set the signed-in user's display name (shown on their public posts)", body: ProfileBody, response: { 200: SessionResponse, ...errorResponses } },
    },
    async (request) => {
      await app.accounts.setDisplayName(request.session!.userId, request.body.displayName);
      return { success: true as const, data: { session: await app.accounts.describe(request.session!) } };
    },
  );

  app.post(
    '/auth/accept',
    {
      schema: {
        tags,
        operationId: 'acceptInvitation',
        summary: 'Accept an invitation to a site (its link\'s token): join it and sign in',
        description:
          'Signed in as the invited email: the site is added to the account and the session moves to it (403 for another email). Not signed in: `password` is the account\'s own for an email that has one (401 when wrong, counted as a failed sign-in; nothing is set), or the new password of a new account. 400 INVALID_TOKEN for an expired, revoked or used invitation.',
        security: [],
        body: AcceptBody,
        response: { 200: SignedInResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      app.checkOrigin(request, false);
      const cookie = request.cookies[app.sessionCookie];
      const auth = cookie ? await app.accounts.authenticate(cookie) : undefined;
      if (auth) {
        const moved = await app.accounts.acceptInvitation(request.body.token, { auth });
        const session = 'token' in moved ? moved.auth : moved;
        request.log.info({ userId: session.userId, siteId: session.site.id }, 'invitation accepted');
        return { success: true as const, data: { message: `You joined ${session.site.name}`, session: await app.accounts.describe(session) } };
      }
      // Not signed in: a password is checked (or set for a new account), throttled as sign-in is.
      const { email } = await app.accounts.invitationFor(request.body.token);
      const { retryAfter, attempt } = app.signInThrottle.begin(email, request.ip);
      if (!attempt) {
        reply.header('Retry-After', String(retryAfter));
        throw new AppError(429, 'RATE_LIMITED', `Too many failed sign-ins: try again in ${retryAfter} s`, { retryAfter });
      }
      let accepted;
      try {
        accepted = await app.accounts.acceptInvitation(request.body.token, { password: request.body.password });
      } catch (error) {
        if (error instanceof AppError && error.statusCode === 401) request.log.warn({ email, address: request.ip }, 'invitation: sign-in failed');
        else attempt.cancel();
        throw error;
      }
      attempt.succeed();
      const session = accepted as Exclude<typeof accepted, { sessionId: string }>;
      request.log.info({ userId: session.auth.userId, siteId: session.auth.site.id }, 'invitation accepted');
      app.setSessionCookie(request, reply, session);
      return { success: true as const, data: { message: `You joined ${session.auth.site.name}`, session: await app.accounts.describe(session.auth) } };
    },
  );

  // At most 3 reset mails per email and 20 per address an hour: a stranger cannot flood a mailbox.
  const forgotLimit = new SignInThrottle({ perEmail: 3, perAddress: 20, windowMs: 60 * 60_000 });
  app.post(
    '/auth/forgot',
    {
      schema: {
        tags,
        operationId: 'forgotPassword',
        summary: 'Ask for a password reset link by mail',
        description:
          'Answers 202 with the same message for any email, whether it has an account or not. The link goes to the address only (valid 24 hours, once), and never in an answer. Without mail set up (SMTP_URL), nothing is sent: the service\'s operator prints a link with `blog-admin user reset-password`.',
        security: [],
        body: ForgotBody,
        response: { 202: MessageResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      app.checkOrigin(request, false);
      const email = request.body.email.trim().toLowerCase();
      const { mail } = app;
      if (mail.configured && forgotLimit.retryAfter(email, request.ip) === 0) {
        forgotLimit.fail(email, request.ip);
        // After the answer: whether the email has an account must not show in its timing.
        setImmediate(() => {
          app.accounts
            .forgotPassword(email)
            .then((found) => (found ? deliverReset({ mail, serviceBaseUrl: app.serviceBaseUrl, log: request.log }, found) : undefined))
            .catch((error: unknown) => request.log.error({ err: error }, 'could not queue a reset mail'));
        });
      }
      const message = mail.configured
        ? 'If this email has an account, a link to set a new password is on its way to it (valid 24 hours).'
        : 'Mail is not set up on this service: ask its operator for a reset link (blog-admin user reset-password).';
      return reply.code(202).send({ success: true, data: { message } });
    },
  );

  app.post(
    '/auth/password',
    {
      onRequest: app.requireSession,
      schema: { tags, security: session, operationId: 'changePassword', summary: "Change the signed-in user's password (ends the user's other sessions)", body: ChangePasswordBody, response: { 200: MessageResponse, ...errorResponses } },
    },
    async (request) => {
      await app.accounts.changePassword(request.session!, request.body.currentPassword, request.body.newPassword);
      return { success: true as const, data: { message: 'Password changed: your other sessions have ended' } };
    },
  );
}
