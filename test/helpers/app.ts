import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import Fastify, { type FastifyInstance, type InjectOptions, type LightMyRequestResponse } from 'fastify';
import blogApp, { serverOptions, type AppOptions } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase, DATABASE_FILE } from '../../src/db/sqlite.js';
import { nodeArgs } from './built.js';
import { sql } from '../../src/db/orm.js';

export { built, nodeArgs } from './built.js';

export const BOOTSTRAP_KEY = 'blog_test-bootstrap-key-0123456789abcdef';
export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const fixturesDir = path.join(projectRoot, 'test/fixtures');

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** A fresh temporary data folder, removed when the test ends. */
export function tempDataDir(t: Teardown): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blog-test-'));
  // Retried: a thread of the closed app (the WAL checkpointer, say) may still be letting go of a file.
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));
  return dir;
}

/**
 * The knowledge extractor run in the test process (the service runs it in a child process):
 * loaded on a file's first extraction, so a test that uploads nothing does not load Word's and
 * PDF's readers.
 */
const extractInProcess: NonNullable<AppOptions['chunkSource']> = async (...args) => (await import('../../src/knowledge/extract.js')).extractChunks(...args);

/**
 * A SQLite database with every migration applied, made once per test process: a test app starts
 * on a copy of it (a few milliseconds) instead of migrating an empty one (a tenth of a second or
 * more, for each of the suite's thousands of apps). The migrations themselves are tested on empty
 * databases by the tests of migrating.
 */
let migratedTemplate: string | null = null;

function migratedSqliteFile(): string {
  if (migratedTemplate && fs.existsSync(migratedTemplate)) return migratedTemplate;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blog-test-template-'));
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  // Closing checkpoints the write-ahead log into the file: the one file is the whole database.
  openDatabase(dir).close();
  migratedTemplate = path.join(dir, DATABASE_FILE);
  return migratedTemplate;
}

/**
 * The database a test app starts on, unless `env` names one: a copy of the migrated template in
 * its data folder (SQLite), or a database copied from a migrated one (PostgreSQL, when the file
 * runs there).
 */
async function testDatabase(t: Teardown, dataDir: string, env: Record<string, string>): Promise<Record<string, string>> {
  if (env.DATABASE_URL !== undefined) return {};
  if (onPostgres) return { DATABASE_URL: await (await import('./postgres.js')).startMigratedPostgres(t) };
  fs.copyFileSync(migratedSqliteFile(), path.join(dataDir, DATABASE_FILE));
  return {};
}

/**
 * The API-level tests run on PostgreSQL with TEST_DATABASE=postgres (`npm run test:postgres`):
 * each test app gets a fresh database on the throwaway cluster the PostgreSQL helper starts.
 */
export const onPostgres = process.env.TEST_DATABASE === 'postgres';

/** Why a test that looks behind the API into SQLite does not run on PostgreSQL. */
export const SQLITE_ONLY = onPostgres && 'looks behind the API into SQLite';

export function testConfig(dataDir: string, env: Record<string, string> = {}): Config {
  // The composer on the event loop: threads would each load the language model (the pool has its own tests).
  // HOST localhost: the public address the tests' pages and links are written against (http://localhost:3000).
  return loadConfig({ DATA_DIR: dataDir, BOOTSTRAP_API_KEY: BOOTSTRAP_KEY, GENERATOR: 'builtin', JOB_POLL_MS: '50', BUILTIN_WORKERS: '0', HOST: 'localhost', ...env });
}

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  dataDir: string;
  key: string;
  site: { id: string; name: string };
  /** app.inject with the site's key unless headers say otherwise. */
  call(options: InjectOptions & { key?: string | null }): Promise<LightMyRequestResponse>;
  /** Another site on the same app, with its own key. */
  addSite(name: string): Promise<{ site: { id: string; name: string }; key: string }>;
  /**
   * Rows of a query behind the API on whichever database the app runs (`?` placeholders; counts
   * come back as numbers on both): for what a test checks beside the API.
   */
  rows<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  /** The number in column `n` of a query's first row (`select count(*) as n ...`). */
  count(sql: string, ...params: unknown[]): Promise<number>;
  /** A second connection to the app's SQLite database, for what a test checks behind the API (SQLite only). */
  readonly sqlite: Database.Database;
}

/** The app as the server builds it, on the given configuration. */
export async function startApp(t: Teardown, config: Config, options: Omit<AppOptions, 'config'> = {}): Promise<FastifyInstance> {
  const app = Fastify(serverOptions(config, false));
  t.teardown(() => app.close());
  await app.register(blogApp, { config, bootstrap: { onKey() {} }, ...options });
  await app.ready();
  return app;
}

/** A log line as the service writes it (pino's JSON). */
export interface LogEntry {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A test app whose log is kept in memory (the other test apps log nothing), for tests that read what is logged. */
export interface LoggedApp {
  app: FastifyInstance;
  config: Config;
  dataDir: string;
  /** Everything logged so far, as written. */
  text(): string;
  /** Everything logged so far, a parsed entry per line. */
  entries(): LogEntry[];
}

/** The app as the server builds it, its log at `level` kept for the test (on PostgreSQL when the file runs there). */
export async function loggedApp(t: Teardown, env: Record<string, string> = {}, { level = 'info', ...options }: Omit<AppOptions, 'config'> & { level?: string } = {}): Promise<LoggedApp> {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += chunk;
      done();
    },
  });
  const dataDir = tempDataDir(t);
  const database = await testDatabase(t, dataDir, env);
  const config = testConfig(dataDir, { ...database, ...env });
  const app = Fastify(serverOptions(config, { level, stream }));
  // A test may close the app itself (to read what closing logs).
  let closed = false;
  app.addHook('onClose', async () => {
    closed = true;
  });
  t.teardown(() => (closed ? undefined : app.close()));
  await app.register(blogApp, { config, bootstrap: { onKey() {} }, ...options });
  await app.ready();
  return {
    app,
    config,
    dataDir,
    text: () => text,
    entries: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as LogEntry),
  };
}

/**
 * Options of a test app. Files are extracted in this process unless `realExtractor` asks for
 * the child process the service uses: starting a child through the TypeScript loader costs
 * about a second per file, and only the tests of extraction itself need it.
 */
export type TestAppOptions = Pick<AppOptions, 'generator' | 'jobs' | 'webhooks' | 'mail' | 'newsletters' | 'indexer' | 'embeddings' | 'resolveTxt' | 'analytics'> & { realExtractor?: boolean };

export async function buildTestApp(t: Teardown, env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = tempDataDir(t);
  const database = await testDatabase(t, dataDir, env);
  const config = testConfig(dataDir, { ...database, ...env });
  const { realExtractor, ...appOptions } = options;
  const app = await startApp(t, config, { ...appOptions, chunkSource: realExtractor ? undefined : extractInProcess });
  const site = (await app.sites.authenticate(BOOTSTRAP_KEY))!.site;
  let sqlite: Database.Database | null = null;
  t.teardown(() => sqlite?.close());
  const ctx: TestApp = {
    app,
    config,
    dataDir,
    key: BOOTSTRAP_KEY,
    site,
    call({ key, headers, ...rest }) {
      const auth = key === null ? {} : { authorization: `Bearer ${key ?? BOOTSTRAP_KEY}` };
      return app.inject({ ...rest, headers: { ...auth, ...headers } } as InjectOptions);
    },
    async rows<T>(text: string, ...params: unknown[]) {
      const { backend } = app;
      if (backend.kind === 'sqlite') return ctx.sqlite.prepare(text).all(...params) as T[];
      const pieces = text.split('?');
      const query = sql.join(pieces.map((piece, i) => (i < params.length ? sql`${sql.raw(piece)}${params[i]}` : sql.raw(piece))));
      return (await backend.postgres.db.execute(query)).rows as T[];
    },
    async count(text: string, ...params: unknown[]) {
      // PostgreSQL's counts are int8, which its driver answers as text.
      const [row] = await ctx.rows<{ n: number | string }>(text, ...params);
      return Number(row!.n);
    },
    async addSite(name) {
      const { site: created, key } = await app.sites.create(name);
      return { site: { id: created.id, name: created.name }, key };
    },
    get sqlite() {
      if (config.database.kind !== 'sqlite') throw new Error('ctx.sqlite: this test app runs on PostgreSQL (skip the test with SQLITE_ONLY)');
      sqlite ??= new Database(path.join(dataDir, 'blog.db'));
      return sqlite;
    },
  };
  return ctx;
}

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The real server (src/server.ts, compiled) in a child process. */
export function spawnServer(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, nodeArgs('src/server.ts'), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export interface Service {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  /** Everything it wrote to stdout so far (its log). */
  output(): string;
}

/** The real server in a child process, once it listens (it logs its address at info level). */
export async function startService(env: Record<string, string>): Promise<Service> {
  const child = spawnServer({ PORT: '0', LOG_LEVEL: 'info', BOOTSTRAP_API_KEY: BOOTSTRAP_KEY, ...env });
  child.stderr!.pipe(process.stderr);
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      const match = output.match(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/);
      if (match) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`service exited early (${code}): ${output}`)));
  });
  child.stdout!.resume();
  return { child, url, exited, output: () => output };
}

/** Waits for a child that should fail to start: its exit code and what it wrote to stderr. */
export async function failedStart(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const [code] = await once(child, 'exit');
  return { code, stderr };
}

/**
 * Waits for a condition by polling it (tests wait for states, never for fixed times). The
 * deadline only bounds a failure: on a busy machine (the suite under a CPU burner beside a soak,
 * load 20 on 2 cores) a process start or an extraction took past 20 s, so it is a minute.
 */
export async function waitFor<T>(check: () => T | Promise<T>, what: string, timeoutMs = 60_000): Promise<Exclude<T, false | null | undefined | 0 | "">> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | null | undefined | 0 | "">;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
