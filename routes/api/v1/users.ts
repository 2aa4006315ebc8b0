import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { deliverInvitation } from '../../../src/accounts/delivery.js';
import { CreateUserBody, InvitationSentResponse, MessageResponse, PatchUserBody, UserListResponse, UserResponse } from '../../../src/schemas/accounts.js';
import { IdParams, errorResponses } from '../../../src/schemas/common.js';

const tags = ['users'];

/**
 * The staff of the current site: owners only (or an API key). People join by accepting an
 * invitation; no answer here ever carries a link that sets a password, nor tells whether an
 * email has an account.
 */
export default async function userRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', app.requireSite);
  app.addHook('onRequest', app.requireOwner);

  app.get(
    '/users',
    { schema: { tags, operationId: 'listUsers', summary: "The site's staff users and their roles, and the invitations not accepted yet", response: { 200: UserListResponse, ...errorResponses } } },
    async (request) => {
      const [users, invitations] = await Promise.all([app.accounts.listMembers(request.site.id), app.accounts.listInvitations(request.site.id)]);
      return { success: true as const, data: { users, invitations } };
    },
  );

  app.post(
    '/users',
    {
      schema: {
        tags,
        operationId: 'addUser',
        summary: 'Invite someone to the site with a role (they join when they accept)',
        description:
          'The same answer whether or not the email has an account anywhere. With mail set up (SMTP_URL) the invitation is mailed and `inviteUrl` is null; without, `inviteUrl` is the link to hand to the person. Inviting an email with a pending invitation sends it again. 409 when the email is already a member of this site.',
        body: CreateUserBody,
        response: { 201: InvitationSentResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const sent = await app.accounts.invite(request.site.id, request.body.email, request.body.role);
      return reply.code(201).send({ success: true, data: await deliverInvitation({ mail: app.mail, serviceBaseUrl: app.serviceBaseUrl, log: request.log }, request.site, sent) });
    },
  );

  app.post(
    '/users/invitations/:id/resend',
    {
      schema: {
        tags,
        operationId: 'resendInvitation',
        summary: 'Send an invitation again: a new link (the old one stops working), valid 7 days',
        params: IdParams,
        response: { 200: InvitationSentResponse, ...errorResponses },
      },
    },
    async (request) => {
      const sent = await app.accounts.resendInvitation(request.site.id, request.params.id);
      return { success: true as const, data: await deliverInvitation({ mail: app.mail, serviceBaseUrl: app.serviceBaseUrl, log: request.log }, request.site, sent) };
    },
  );

  app.delete(
    '/users/invitations/:id',
    { schema: { tags, operationId: 'revokeInvitation', summary: 'Revoke an invitation: its link stops working', params: IdParams, response: { 200: MessageResponse, ...errorResponses } } },
    async (request) => {
      await app.accounts.revokeInvitation(request.site.id, request.params.id);
      return { success: true as const, data: { message: 'Invitation revoked' } };
    },
  );

  app.patch(
    '/users/:id',
    { schema: { tags, operationId: 'updateUser', summary: "Change a user's role on the site (a site keeps one owner)", params: IdParams, body: PatchUserBody, response: { 200: UserResponse, ...errorResponses } } },
    async (request) => ({
      success: true as const,
      data: { message: 'Role changed', user: await app.accounts.setRole(request.site.id, request.params.id, request.body.role) },
    }),
  );

  app.delete(
    '/users/:id',
    {
      schema: {
        tags,
        operationId: 'removeUser',
        summary: 'Remove a user from the site (their sessions on it end; their other sites and their account are untouched)',
        params: IdParams,
        response: { 200: MessageResponse, ...errorResponses },
      },
    },
    async (request) => {
      await app.accounts.removeMember(request.site.id, request.params.id);
      return { success: true as const, data: { message: 'User removed from the site' } };
    },
  );
}

