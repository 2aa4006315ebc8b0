import { defineConfig } from 'drizzle-kit';

// The PostgreSQL twin of drizzle.config.ts: `npm run db:generate:postgres` writes its migrations
// to drizzle/postgres, beside (never among) SQLite's.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/pg-schema.ts',
  out: './drizzle/postgres',
});
