import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { TaskRow } from '../../../src/db/schema.js';
import { cancelTask, getTask, listTasks } from '../../../src/jobs/store.js';
import { IdParams, errorResponses } from '../../../src/schemas/common.js';
import { TaskListQuery, TaskListResponse, TaskResponse } from '../../../src/schemas/generation.js';

export const taskView = (task: TaskRow) => ({ ...task, missingFileIds: task.missingFileIds ?? [] });

const tags = ['tasks'];

export default async function taskRoutes(app: FastifyInstance) {
  app.addHook('onRequest', app.requireSite);

  app.get<{ Params: Static<typeof IdParams> }>(
    '/tasks/:id',
    { schema: { tags, summary: 'Retrieve a batch generation task', params: IdParams, response: { 200: TaskResponse, ...errorResponses } } },
    async (request) => {
      const task = getTask(app.db, request.site.id, request.params.id);
      return { success: true, data: { message: 'Task retrieved successfully', task: taskView(task), site: request.site } };
    },
  );

  app.get<{ Querystring: Static<typeof TaskListQuery> }>(
    '/tasks',
    { schema: { tags, summary: 'List tasks, by batch and status', querystring: TaskListQuery, response: { 200: TaskListResponse, ...errorResponses } } },
    async (request) => {
      const page = listTasks(app.db, request.site.id, request.query);
      return { success: true, data: { tasks: page.items.map(taskView), pagination: page.pagination, site: request.site } };
    },
  );

  app.delete<{ Params: Static<typeof IdParams> }>(
    '/tasks/:id',
    { schema: { tags, summary: 'Cancel a pending task (409 otherwise)', params: IdParams, response: { 200: TaskResponse, ...errorResponses } } },
    async (request) => {
      const task = cancelTask(app.db, request.site.id, request.params.id);
      return { success: true, data: { message: 'Task cancelled', task: taskView(task), site: request.site } };
    },
  );
}
