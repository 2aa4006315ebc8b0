import os from 'node:os';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { setImageThreads } from '../src/media/images.js';
import { MediaService } from '../src/media/service.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Each site's media library: images processed, stored and served. */
    media: MediaService;
  }
}

/**
 * The media library over the knowledge files' object store, counted in the same quota. Images
 * are processed on libvips' threads, one image at a time (one per site), with one core left to
 * the event loop so pages keep answering while images are processed.
 */
export default fp(
  async function mediaPlugin(app: FastifyInstance) {
    const cores = os.availableParallelism();
    setImageThreads(Math.max(1, cores - 1));
    const { usage } = app.stores.knowledge;
    app.decorate(
      'media',
      new MediaService(app.stores.media, app.objectStore, { quotaBytes: app.config.siteStorageQuotaBytes, usage, concurrency: Math.max(1, Math.floor(cores / 2)) }),
    );
  },
  { name: 'media', dependencies: ['db', 'knowledge'] },
);
