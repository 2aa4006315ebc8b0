import { createRequire } from 'node:module';
import type * as Core from 'drizzle-orm';

/*
 * drizzle-orm, loaded as CommonJS: the service's modules take drizzle's values from here, and
 * PostgreSQL's entry points from pg-orm.ts (types they still import from drizzle-orm itself,
 * which costs nothing at run time).
 *
 * Why: for every ES module it loads, Node 24 looks up the package's package.json and parses its
 * whole `exports` field again. drizzle's is 179 kB (447 entry points) and its ES build is some
 * 150 modules: loading it cost over a second of CPU, half of all the service's start-up (the
 * server's, the CLI's, each test process's). Its CommonJS build, the same code, is loaded by
 * `require`, which reads no package.json for its .cjs files.
 */
const require = createRequire(import.meta.url);
const core = require('drizzle-orm') as typeof Core;

export const {
  and,
  asc,
  count,
  countDistinct,
  desc,
  eq,
  exists,
  getTableColumns,
  getTableName,
  gt,
  gte,
  inArray,
  is,
  isNotNull,
  isNull,
  like,
  lt,
  lte,
  max,
  min,
  ne,
  notInArray,
  or,
  sql,
  SQL,
  Table,
} = core;
// The classes are types too.
export type SQL = Core.SQL;
export type Table = Core.Table;

export const sqliteCore = require('drizzle-orm/sqlite-core') as typeof import('drizzle-orm/sqlite-core');
export const betterSqlite3 = require('drizzle-orm/better-sqlite3') as typeof import('drizzle-orm/better-sqlite3');
export const betterSqlite3Migrator = require('drizzle-orm/better-sqlite3/migrator') as typeof import('drizzle-orm/better-sqlite3/migrator');
export const migrator = require('drizzle-orm/migrator') as typeof import('drizzle-orm/migrator');
export const drizzleErrors = require('drizzle-orm/errors') as typeof import('drizzle-orm/errors');
