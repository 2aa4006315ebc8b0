import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { PgPostStore } from '../src/posts/pg-store.js';
import { PostService } from '../src/posts/service.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Posts, in the database DATABASE_URL chose (the same methods and answers on both). */
    posts: PostService | PgPostStore;
  }
}

export default fp(
  async function postsPlugin(app: FastifyInstance) {
    const { backend } = app;
    app.decorate<PostService | PgPostStore>('posts', backend.kind === 'sqlite' ? new PostService(backend.sqlite.db) : new PgPostStore(backend.postgres.db));
  },
  { name: 'posts', dependencies: ['db'] },
);
