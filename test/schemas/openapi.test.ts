import fs from 'node:fs';
import path from 'node:path';
import { lint, loadConfig } from '@redocly/openapi-core';
import { Validator } from '@seriousme/openapi-schema-validator';
import t, { type Test } from 'tap';
import { CLIENT_TYPES_FILE, DOCUMENT_FILE, clientTypes, documentText } from '../../src/client/generate.js';
import { buildTestApp, projectRoot } from '../helpers/app.js';

interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; schema?: { default?: unknown } }[];
  requestBody?: { content: Record<string, { schema?: unknown; example?: unknown; examples?: unknown }> };
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
type Document = { paths: Record<string, Record<string, Operation>> };

/** The operations clients call by name: a rename is a visible decision, made here. */
const OPERATION_IDS = {
  'GET /health': 'getHealth',
  'GET /ready': 'getReadiness',
  'POST /api/v1/posts': 'createPost',
  'GET /api/v1/posts': 'listPosts',
  'POST /api/v1/posts/preview': 'previewPost',
  'POST /api/v1/posts/generate': 'generatePost',
  'POST /api/v1/posts/batch': 'schedulePosts',
  'GET /api/v1/posts/{id}': 'getPost',
  'PUT /api/v1/posts/{id}': 'togglePostDraft',
  'PATCH /api/v1/posts/{id}': 'updatePost',
  'DELETE /api/v1/posts/{id}': 'deletePost',
  'GET /api/v1/posts/{id}/revisions': 'listPostRevisions',
  'POST /api/v1/posts/{id}/revisions/{revId}/restore': 'restorePostRevision',
  'GET /api/v1/posts/{id}/pending': 'getPendingChange',
  'PUT /api/v1/posts/{id}/pending': 'savePendingChange',
  'DELETE /api/v1/posts/{id}/pending': 'discardPendingChange',
  'POST /api/v1/posts/{id}/review': 'submitPostForReview',
  'GET /api/v1/posts/{id}/share': 'getPostShareLink',
  'POST /api/v1/posts/{id}/share': 'sharePostPreview',
  'DELETE /api/v1/posts/{id}/share': 'revokePostShareLink',
  'POST /api/v1/knowledge': 'uploadKnowledge',
  'POST /api/v1/media': 'uploadMedia',
  'GET /api/v1/media': 'listMedia',
  'GET /api/v1/media/{id}': 'getMedia',
  'PATCH /api/v1/media/{id}': 'updateMedia',
  'DELETE /api/v1/media/{id}': 'deleteMedia',
  'GET /api/v1/knowledge': 'listKnowledge',
  'GET /api/v1/knowledge/search': 'searchKnowledge',
  'GET /api/v1/knowledge/{id}': 'getKnowledge',
  'DELETE /api/v1/knowledge/{id}': 'deleteKnowledge',
  'GET /api/v1/tasks/{id}': 'getTask',
  'DELETE /api/v1/tasks/{id}': 'cancelTask',
  'GET /api/v1/tasks': 'listTasks',
  'GET /api/v1/site': 'getSite',
  'PATCH /api/v1/site': 'updateSite',
  'GET /api/v1/stats': 'getStats',
  'GET /api/v1/stats/posts': 'getPostsStats',
  'GET /api/v1/posts/{id}/stats': 'getPostStats',
  'GET /api/v1/subscribers': 'listSubscribers',
  'GET /api/v1/subscribers/stats': 'getSubscribersOverTime',
  'GET /api/v1/subscribers.csv': 'exportSubscribers',
  'POST /api/v1/subscribers/import': 'importSubscribers',
  'DELETE /api/v1/subscribers/{id}': 'deleteSubscriber',
  'GET /api/v1/posts/{id}/newsletter': 'getPostNewsletter',
  'POST /content/v1/sites/{handle}/subscribers': 'subscribeToSite',
  'POST /api/v1/posts/{id}/newsletter/test': 'sendNewsletterTest',
  'POST /api/v1/site/domain/verify': 'verifySiteDomain',
  'POST /api/v1/webhooks': 'createWebhook',
  'GET /api/v1/webhooks': 'listWebhooks',
  'GET /api/v1/webhooks/{id}': 'getWebhook',
  'PATCH /api/v1/webhooks/{id}': 'updateWebhook',
  'DELETE /api/v1/webhooks/{id}': 'deleteWebhook',
  'POST /api/v1/webhooks/{id}/rotate-secret': 'rotateWebhookSecret',
  'GET /api/v1/webhooks/{id}/deliveries': 'listWebhookDeliveries',
  'POST /api/v1/webhooks/{id}/deliveries/{deliveryId}/retry': 'retryWebhookDelivery',
  'POST /api/v1/auth/sign-in': 'signIn',
  'GET /api/v1/auth/session': 'getSession',
  'POST /api/v1/auth/sign-out': 'signOut',
  'PUT /api/v1/auth/session/site': 'switchSite',
  'POST /api/v1/auth/setup': 'setUpPassword',
  'POST /api/v1/auth/password': 'changePassword',
  'PATCH /api/v1/auth/profile': 'updateProfile',
  'POST /api/v1/auth/accept': 'acceptInvitation',
  'POST /api/v1/auth/forgot': 'forgotPassword',
  'GET /api/v1/users': 'listUsers',
  'POST /api/v1/users': 'addUser',
  'PATCH /api/v1/users/{id}': 'updateUser',
  'DELETE /api/v1/users/{id}': 'removeUser',
  'POST /api/v1/users/invitations/{id}/resend': 'resendInvitation',
  'DELETE /api/v1/users/invitations/{id}': 'revokeInvitation',
  'GET /api/v1/keys': 'listKeys',
  'POST /api/v1/keys': 'createKey',
  'DELETE /api/v1/keys/{id}': 'revokeKey',
  'GET /content/v1/sites/{handle}/posts': 'listPublicPosts',
  'GET /content/v1/sites/{handle}/posts/{slug}': 'getPublicPost',
  'GET /content/v1/sites/{handle}/challenge': 'getSpamGuardChallenge',
  'GET /content/v1/sites/{handle}/posts/{slug}/comments': 'listPublicComments',
  'POST /content/v1/sites/{handle}/posts/{slug}/comments': 'submitPublicComment',
  'GET /api/v1/comments': 'listComments',
  'PATCH /api/v1/comments/{id}': 'moderateComment',
  'DELETE /api/v1/comments/{id}': 'deleteComment',
  'POST /api/v1/posts/{id}/comments': 'replyToPost',
  'POST /api/v1/comments/erase-email': 'eraseCommenterEmail',
  'GET /api/v1/comments/mail': 'getCommentMail',
  'PUT /api/v1/comments/mail': 'setCommentMail',
};

/** Actions that take no body (POST because they change something). */
const BODYLESS = new Set([
  'POST /api/v1/auth/sign-out',
  'POST /api/v1/users/invitations/{id}/resend',
  'POST /api/v1/keys',
  'POST /api/v1/posts/{id}/revisions/{revId}/restore', 'POST /api/v1/posts/{id}/review', 'POST /api/v1/posts/{id}/share',
  'POST /api/v1/site/domain/verify', 'POST /api/v1/posts/{id}/newsletter/test', 'POST /api/v1/webhooks/{id}/rotate-secret', 'POST /api/v1/webhooks/{id}/deliveries/{deliveryId}/retry']);

async function servedDocument(t: Test): Promise<Document> {
  const ctx = await buildTestApp(t);
  const res = await ctx.call({ method: 'GET', url: '/docs/json', key: null });
  t.equal(res.statusCode, 200);
  return res.json();
}

const operations = (document: Document) =>
  Object.entries(document.paths).flatMap(([url, methods]) => Object.entries(methods).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${url}`, operation })));

t.test('openapi.json and the client types are what the app serves (else: npm run openapi)', async (t) => {
  const document = await servedDocument(t);
  const kept = fs.readFileSync(path.join(projectRoot, DOCUMENT_FILE), 'utf8');
  t.ok(kept === documentText(document), `${DOCUMENT_FILE} is stale: run \`npm run openapi\` and commit the result`);
  const types = fs.readFileSync(path.join(projectRoot, CLIENT_TYPES_FILE), 'utf8');
  t.ok(types === (await clientTypes(JSON.parse(kept))), `${CLIENT_TYPES_FILE} is stale: run \`npm run openapi\` and commit the result`);
});

t.test('the document is valid OpenAPI 3 and names, describes and types every operation', async (t) => {
  const document = await servedDocument(t);
  const validation = await new Validator().validate(structuredClone(document));
  t.ok(validation.valid, `valid OpenAPI: ${JSON.stringify(validation.errors ?? '')}`);

  const found = Object.fromEntries(operations(document).map(({ key, operation }) => [key, operation.operationId]));
  t.same(found, OPERATION_IDS, 'every operation has its pinned operationId');
  for (const { key, operation } of operations(document)) {
    t.ok(operation.summary, `${key}: summary`);
    t.ok(operation.tags?.length, `${key}: tags`);
    const success = Object.entries(operation.responses).filter(([code]) => code.startsWith('2'));
    // The one export answers CSV, typed as such.
    const type = key === 'GET /api/v1/subscribers.csv' ? 'text/csv' : 'application/json';
    t.ok(success.length > 0 && success.every(([, response]) => response.content?.[type]?.schema), `${key}: a typed success response`);
    if (!key.startsWith('GET /health') && !key.startsWith('GET /ready')) {
      t.ok(operation.responses['4XX']?.content?.['application/json']?.schema, `${key}: the error envelope for 4xx`);
    }
    for (const parameter of operation.parameters ?? []) {
      if (parameter.schema?.default !== undefined) t.notOk(parameter.required, `${key}: ${parameter.name} has a default, so it is optional`);
    }
    const takesBody = ['POST', 'PATCH'].some((method) => key.startsWith(method)) && !BODYLESS.has(key);
    if (takesBody) {
      const media = Object.values(operation.requestBody?.content ?? {})[0];
      t.ok(media?.schema, `${key}: a request body schema`);
      if (key !== 'POST /api/v1/knowledge' && key !== 'POST /api/v1/media' && key !== 'POST /api/v1/subscribers/import') t.ok(media?.example ?? media?.examples, `${key}: an example to try`);
    }
  }
  const upload = document.paths['/api/v1/knowledge'].post.requestBody!.content['multipart/form-data'];
  t.match(upload.schema, { properties: { file: { type: 'string', format: 'binary' } } }, 'the upload describes its file part');
});

t.test("Redocly's recommended rules find nothing (the probes may have no 4xx)", async (t) => {
  const file = path.join(t.testdir(), 'openapi.json');
  fs.writeFileSync(file, JSON.stringify(await servedDocument(t)));
  const problems = await lint({ ref: file, config: await loadConfig() });
  const report = problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location?.[0]?.pointer}`);
  const allowed = (line: string) => /operation-4xx-response: .* at #\/paths\/~1(health|ready)\/get\/responses$/.test(line);
  t.same(report.filter((line) => !allowed(line)), []);
});
