import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { PostStore } from '../src/posts/store.js';
import type { RevisionStore } from '../src/revisions/store.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Posts, in the database DATABASE_URL chose. */
    posts: PostStore;
    /** Posts' revisions and published posts' pending changes. */
    revisions: RevisionStore;
  }
}

export default fp(
  async function postsPlugin(app: FastifyInstance) {
    app.decorate('posts', app.stores.posts);
    app.decorate('revisions', app.stores.revisions);
  },
  { name: 'posts', dependencies: ['db'] },
);
