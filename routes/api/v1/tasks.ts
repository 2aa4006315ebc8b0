import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { IdParams, errorResponses } from '../../../src/schemas/common.js';
import { TaskListQuery, TaskListResponse, TaskResponse } from '../../../src/schemas/generation.js';

const tags = ['tasks'];

export default async function taskRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', app.requireSite);

  app.get(
    '/tasks/:id',
    { schema: { tags, operationId: 'getTask', summary: 'Retrieve a batch generation task', params: IdParams, response: { 200: TaskResponse, ...errorResponses } } },
    async (request) => {
      const task = await app.tasks.get(request.site.id, request.params.id);
      return { success: true as const, data: { message: 'Task retrieved successfully', task, site: request.site } };
    },
  );

  app.get(
    '/tasks',
    { schema: { tags, operationId: 'listTasks', summary: 'List tasks, by batch and status', querystring: TaskListQuery, response: { 200: TaskListResponse, ...errorResponses } } },
    async (request) => {
      const page = await app.tasks.list(request.site.id, request.query);
      return { success: true as const, data: { tasks: page.items, pagination: page.pagination, site: request.site } };
    },
  );

  app.delete(
    '/tasks/:id',
    { schema: { tags, operationId: 'cancelTask', summary: 'Cancel a pending task (409 otherwise)', params: IdParams, response: { 200: TaskResponse, ...errorResponses } } },
    async (request) => {
      const task = await app.tasks.cancel(request.site.id, request.params.id);
      return { success: true as const, data: { message: 'Task cancelled', task, site: request.site } };
    },
  );
}
