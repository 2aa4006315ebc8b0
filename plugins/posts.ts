import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { PostStore } from '../src/posts/store.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Posts, in the database DATABASE_URL chose. */
    posts: PostStore;
  }
}

export default fp(
  async function postsPlugin(app: FastifyInstance) {
    app.decorate('posts', app.stores.posts);
  },
  { name: 'posts', dependencies: ['db'] },
);
