import { createRequire } from 'node:module';

/*
 * drizzle's PostgreSQL entry points, loaded as CommonJS for the reason orm.ts gives. Only the
 * PostgreSQL modules import this one, so a service on SQLite never loads them (or pg, which
 * drizzle's node-postgres driver loads).
 */
const require = createRequire(import.meta.url);

export const pgCore = require('drizzle-orm/pg-core') as typeof import('drizzle-orm/pg-core');
export const nodePostgres = require('drizzle-orm/node-postgres') as typeof import('drizzle-orm/node-postgres');
export const nodePostgresMigrator = require('drizzle-orm/node-postgres/migrator') as typeof import('drizzle-orm/node-postgres/migrator');
