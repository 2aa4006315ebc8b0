import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { setupUrl } from '../../../src/accounts/rules.js';
import { CreateUserBody, MessageResponse, PatchUserBody, SetupUrlResponse, UserCreatedResponse, UserListResponse, UserResponse } from '../../../src/schemas/accounts.js';
import { IdParams, errorResponses } from '../../../src/schemas/common.js';

const tags = ['users'];

/** The staff of the current site: owners only (or an API key). */
export default async function userRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', app.requireSite);
  app.addHook('onRequest', app.requireOwner);

  app.get(
    '/users',
    { schema: { tags, operationId: 'listUsers', summary: "The site's staff users and their roles", response: { 200: UserListResponse, ...errorResponses } } },
    async (request) => ({ success: true as const, data: { users: await app.accounts.listMembers(request.site.id) } }),
  );

  app.post(
    '/users',
    {
      schema: {
        tags,
        operationId: 'addUser',
        summary: 'Add a user to the site (a new user gets a one-time setup link)',
        body: CreateUserBody,
        response: { 201: UserCreatedResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { user, setupToken, created } = await app.accounts.addMember(request.site.id, request.body.email, request.body.role);
      const message = created ? 'User created: send them the setup link (valid 24 hours, once)' : setupToken ? 'User added to the site: send them the setup link' : 'User added to the site';
      return reply.code(201).send({ success: true, data: { message, user, setupUrl: setupToken ? setupUrl(app.serviceBaseUrl, setupToken) : null } });
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
    { schema: { tags, operationId: 'removeUser', summary: 'Remove a user from the site (their sessions on it end)', params: IdParams, response: { 200: MessageResponse, ...errorResponses } } },
    async (request) => {
      await app.accounts.removeMember(request.site.id, request.params.id);
      return { success: true as const, data: { message: 'User removed from the site' } };
    },
  );

  app.post(
    '/users/:id/reset',
    { schema: { tags, operationId: 'resetUserPassword', summary: 'A one-time link for the user to set a new password', params: IdParams, response: { 200: SetupUrlResponse, ...errorResponses } } },
    async (request) => {
      const token = await app.accounts.resetLink(request.site.id, request.params.id);
      return { success: true as const, data: { message: 'Send the user this link (valid 24 hours, once)', setupUrl: setupUrl(app.serviceBaseUrl, token) } };
    },
  );
}
