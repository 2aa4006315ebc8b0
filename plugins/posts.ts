import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { PostService } from '../src/posts/service.js';

declare module 'fastify' {
  interface FastifyInstance {
    posts: PostService;
  }
}

export default fp(
  async function postsPlugin(app: FastifyInstance) {
    app.decorate('posts', new PostService(app.database.db));
  },
  { name: 'posts', dependencies: ['db'] },
);
