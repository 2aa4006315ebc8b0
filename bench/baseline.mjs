// The "stack limit" baseline of npm run bench (bench/posts.mjs): the least a Fastify 5 +
// better-sqlite3 service can do for the posts routes, started beside the service in the same run
// so each route has a same-machine, same-moment reference.
//
//   - SQLite in WAL mode (synchronous = NORMAL, foreign keys on, as the service opens it);
//   - every /posts request carries `Authorization: Bearer <key>`; the key is hashed with SHA-256
//     and looked up in SQLite on every request (no cache), 401 when unknown;
//   - GET /posts/:id: one indexed read (id and site), the row as JSON through a response schema;
//   - GET /posts?page&limit: a page of posts newest first, found by offset in the (site,
//     created_at) index, its rows as JSON through a response schema (the same work for a page
//     as for one post, 20 times: the stack's own list-versus-one ratio);
//   - POST /posts: a JSON-schema-validated body { title, content, tags }, a slug from the title,
//     one durable insert (INSERT ... RETURNING), the created row as JSON (201);
//   - GET /health without a key.
//
// At start it creates and seeds its database if empty: one site, the key, BASELINE_POSTS posts
// (default 10,000) of about BASELINE_CONTENT_CHARS characters (default 800), in one transaction.
//
// Usage: PORT=3999 BASELINE_DB=/tmp/baseline.db BASELINE_API_KEY=secret node bench/baseline.mjs

import { createHash, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { textGenerator } from './lib.mjs';

const PORT = Number(process.env.PORT) || 3999;
const HOST = process.env.HOST || '127.0.0.1';
const DB_FILE = process.env.BASELINE_DB;
const API_KEY = process.env.BASELINE_API_KEY || process.env.BOOTSTRAP_API_KEY;
const POSTS = Number(process.env.BASELINE_POSTS ?? 10_000);
const CONTENT_CHARS = Number(process.env.BASELINE_CONTENT_CHARS) || 800;
if (!DB_FILE || !API_KEY) {
  console.error('bench/baseline.mjs needs BASELINE_DB (a database file) and BASELINE_API_KEY (the Bearer key)');
  process.exit(2);
}

const SITE_ID = 'baseline-site';
const sha256 = (text) => createHash('sha256').update(text).digest('hex');
const slugify = (title) => title.toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 80).replace(/^-+|-+$/g, '') || 'post';

// ---------------------------------------------------------------------------------------------
// Database
// ---------------------------------------------------------------------------------------------

const db = new Database(DB_FILE);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');
db.exec(`
  create table if not exists sites (id text primary key, name text not null);
  create table if not exists api_keys (
    hash text primary key,
    site_id text not null references sites(id) on delete cascade
  );
  create table if not exists posts (
    id text primary key,
    site_id text not null references sites(id) on delete cascade,
    slug text not null,
    title text not null,
    content text,
    tags text not null default '[]',
    created_at integer not null,
    updated_at integer not null
  );
  create unique index if not exists posts_site_slug on posts (site_id, slug);
  create index if not exists posts_site_created on posts (site_id, created_at);
`);

const findKey = db.prepare('select site_id from api_keys where hash = ?').pluck();
const selectPost = db.prepare('select id, site_id, slug, title, content, tags, created_at, updated_at from posts where id = ? and site_id = ?');
const selectPage = db.prepare(
  'select id, site_id, slug, title, content, tags, created_at, updated_at from posts where site_id = ? order by created_at desc limit ? offset ?',
);
const insertPost = db.prepare(
  `insert into posts (id, site_id, slug, title, content, tags, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?)
   returning id, site_id, slug, title, content, tags, created_at, updated_at`,
);

function seed() {
  const started = performance.now();
  const existing = db.prepare('select count(*) from posts').pluck().get();
  db.transaction(() => {
    db.prepare('insert or ignore into sites (id, name) values (?, ?)').run(SITE_ID, 'Baseline');
    db.prepare('insert or ignore into api_keys (hash, site_id) values (?, ?)').run(sha256(API_KEY), SITE_ID);
    if (existing > 0) return;
    const gen = textGenerator(23, 4000);
    const base = Date.now() - POSTS * 60_000;
    for (let i = 0; i < POSTS; i++) {
      const words = [gen.content(), gen.content(), gen.content()];
      const title = `${gen.titleCase(words.join(' '))} ${i + 1}`;
      const heading = `# ${title}\n\n`;
      const created = base + i * 60_000;
      insertPost.run(randomUUID(), SITE_ID, slugify(title), title, heading + gen.textOf(CONTENT_CHARS - heading.length), JSON.stringify(words), created, created);
    }
  })();
  return { existing, ms: Math.round(performance.now() - started) };
}

// ---------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------

const Post = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    siteId: { type: 'string' },
    slug: { type: 'string' },
    title: { type: 'string' },
    content: { type: ['string', 'null'] },
    tags: { type: 'array', items: { type: 'string' } },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
  },
};
const ErrorBody = { type: 'object', properties: { error: { type: 'string' } } };

const view = (row) => ({
  id: row.id,
  siteId: row.site_id,
  slug: row.slug,
  title: row.title,
  content: row.content,
  tags: JSON.parse(row.tags),
  createdAt: new Date(row.created_at).toISOString(),
  updatedAt: new Date(row.updated_at).toISOString(),
});

const app = Fastify({ logger: false });

app.get('/health', async () => ({ status: 'ok' }));

app.register(async (api) => {
  api.decorateRequest('siteId', '');
  api.addHook('onRequest', (request, reply, done) => {
    const header = request.headers.authorization;
    const siteId = typeof header === 'string' && header.startsWith('Bearer ') ? findKey.get(sha256(header.slice(7))) : undefined;
    if (!siteId) {
      reply.code(401).send({ error: 'unauthorized' });
      return;
    }
    request.siteId = siteId;
    done();
  });

  api.get(
    '/posts/:id',
    {
      schema: {
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } },
        response: { 200: Post, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      const row = selectPost.get(request.params.id, request.siteId);
      if (!row) return reply.code(404).send({ error: 'not found' });
      return view(row);
    },
  );

  api.get(
    '/posts',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: { page: { type: 'integer', minimum: 1, default: 1 }, limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
        },
        response: { 200: { type: 'object', properties: { posts: { type: 'array', items: Post } } } },
      },
    },
    async (request) => {
      const { page, limit } = request.query;
      return { posts: selectPage.all(request.siteId, limit, (page - 1) * limit).map(view) };
    },
  );

  api.post(
    '/posts',
    {
      schema: {
        body: {
          type: 'object',
          required: ['title'],
          additionalProperties: false,
          properties: {
            title: { type: 'string', minLength: 1, maxLength: 200 },
            content: { type: 'string', maxLength: 100_000 },
            tags: { type: 'array', maxItems: 20, items: { type: 'string', minLength: 1, maxLength: 50 } },
          },
        },
        response: { 201: Post },
      },
    },
    async (request, reply) => {
      const { title, content = '', tags = [] } = request.body;
      const id = randomUUID();
      const now = Date.now();
      const slug = slugify(title);
      let row;
      try {
        row = insertPost.get(id, request.siteId, slug, title, content, JSON.stringify(tags), now, now);
      } catch (error) {
        // A repeated title: the cheapest unique slug, no lookup.
        if (error?.code !== 'SQLITE_CONSTRAINT_UNIQUE') throw error;
        row = insertPost.get(id, request.siteId, `${slug}-${id.slice(0, 8)}`, title, content, JSON.stringify(tags), now, now);
      }
      return reply.code(201).send(view(row));
    },
  );
});

const seeded = seed();
const closeAll = async () => {
  await app.close();
  db.close();
  process.exit(0);
};
process.once('SIGTERM', closeAll);
process.once('SIGINT', closeAll);

await app.listen({ port: PORT, host: HOST });
console.log(
  `baseline listening on http://${HOST}:${PORT}: ${seeded.existing > 0 ? `${seeded.existing} posts already there` : `seeded ${POSTS} posts in ${seeded.ms} ms`} (${DB_FILE})`,
);
