import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { readingUpload, registerUploadParser } from './upload-parser.js';
import { MAX_IMAGE_BYTES } from '../../../src/limits.js';
import type { MediaRow } from '../../../src/db/schema.js';
import { mediaResource } from '../../../src/media/view.js';
import { IdParams, errorResponses } from '../../../src/schemas/common.js';
import { MediaDeletedResponse, MediaListQuery, MediaListResponse, MediaPatchBody, MediaResponse, MediaUploadBody } from '../../../src/schemas/media.js';

const tags = ['media'];

export default async function mediaRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  await registerUploadParser(app, MAX_IMAGE_BYTES);
  app.addHook('onRequest', app.requireSite);

  /** The image as the API shows it, its URLs under the site's address. */
  const shown = async (request: FastifyRequest, rows: MediaRow[]) => {
    const baseUrl = app.publicPages.view(await app.sites.get(request.site.id), '').baseUrl;
    return rows.map((row) => mediaResource(row, baseUrl));
  };

  app.post(
    '/media',
    {
      schema: {
        tags,
        operationId: 'uploadMedia',
        summary: 'Upload an image (multipart/form-data, one part named "file")',
        description:
          'JPEG, PNG, WebP, GIF or AVIF, checked by content, at most 20 MiB and 50 megapixels (SVG is refused). Rotated upright, stripped of all metadata, kept at most 2,000 px wide, with variants 600, 1,000 and 1,600 px wide in WebP and the original format.',
        consumes: ['multipart/form-data'],
        response: { 201: MediaResponse, ...errorResponses },
      },
      config: { multipartBody: MediaUploadBody, idempotent: true },
    },
    async (request, reply) => {
      const row = await readingUpload(app.media.upload(request.site.id, request.parts()));
      const [media] = await shown(request, [row]);
      return reply.code(201).send({ success: true, data: { message: 'Image uploaded successfully', media: media!, site: request.site } });
    },
  );

  app.get(
    '/media',
    { schema: { tags, operationId: 'listMedia', summary: "List the site's images, newest first", querystring: MediaListQuery, response: { 200: MediaListResponse, ...errorResponses } } },
    async (request) => {
      const page = await app.media.list(request.site.id, request.query.page, request.query.limit);
      return { success: true as const, data: { items: await shown(request, page.items), pagination: page.pagination, site: request.site } };
    },
  );

  app.get(
    '/media/:id',
    { schema: { tags, operationId: 'getMedia', summary: 'Retrieve an image', params: IdParams, response: { 200: MediaResponse, ...errorResponses } } },
    async (request) => {
      const [media] = await shown(request, [await app.media.get(request.site.id, request.params.id)]);
      return { success: true as const, data: { message: 'Image retrieved successfully', media: media!, site: request.site } };
    },
  );

  app.patch(
    '/media/:id',
    { schema: { tags, operationId: 'updateMedia', summary: "Set an image's alt text", params: IdParams, body: MediaPatchBody, response: { 200: MediaResponse, ...errorResponses } } },
    async (request) => {
      const [media] = await shown(request, [await app.media.setAlt(request.site.id, request.params.id, request.body.alt)]);
      return { success: true as const, data: { message: 'Image updated successfully', media: media!, site: request.site } };
    },
  );

  app.delete(
    '/media/:id',
    {
      schema: {
        tags,
        operationId: 'deleteMedia',
        summary: 'Delete an image and its stored files',
        description: 'Posts that show it as their feature image lose it.',
        params: IdParams,
        response: { 200: MediaDeletedResponse, ...errorResponses },
      },
    },
    async (request) => {
      await app.media.delete(request.site.id, request.params.id);
      return { success: true as const, data: { message: 'Image deleted successfully', mediaId: request.params.id, site: request.site } };
    },
  );
}
