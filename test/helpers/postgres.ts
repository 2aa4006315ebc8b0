import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import tap from 'tap';
import { openPostgres, type PostgresHandle, type PostgresOptions } from '../../src/db/postgres.js';

// ---------------------------------------------------------------------------------------------
// A throwaway PostgreSQL for tests: one cluster per test process, started on first use (a copy
// of a data folder initdb made once, in a temporary folder, a free TCP port, its unix socket in
// the same folder), one fresh database per call. With TEST_DATABASE_URL set, that server is used
// instead (databases are created on it and dropped after each test; it cannot be stopped or
// restarted from here).
// ---------------------------------------------------------------------------------------------

const run = promisify(execFile);

const PROGRAMS = ['initdb', 'pg_ctl', 'postgres'];

/**
 * Where PostgreSQL's programs are: PG_BIN, else the newest version Debian installed
 * (/usr/lib/postgresql/<version>/bin; `postgresql` brings 15 on bookworm, 17 on trixie).
 */
export const PG_BIN = process.env.PG_BIN ?? debianPgBin() ?? '/usr/lib/postgresql/15/bin';

function debianPgBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).filter((name) => /^\d+$/.test(name)) : [];
  return versions
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => path.join(root, version, 'bin'))
    .find((bin) => PROGRAMS.every((name) => fs.existsSync(path.join(bin, name))));
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

/**
 * Why PostgreSQL tests cannot run here, or null when they can: a server at TEST_DATABASE_URL,
 * or PostgreSQL's programs (initdb, pg_ctl) to start one.
 */
export function postgresUnavailable(): string | null {
  if (process.env.TEST_DATABASE_URL) return null;
  const missing = PROGRAMS.filter((name) => !fs.existsSync(path.join(PG_BIN, name)));
  if (missing.length === 0) return null;
  return `PostgreSQL not available: TEST_DATABASE_URL is unset and ${missing.join(', ')} not found in ${PG_BIN} (set PG_BIN or TEST_DATABASE_URL)`;
}

/** CI=true (or any value but false/0): the PostgreSQL tests must run there, never skip. */
const inCI = !!process.env.CI && !/^(false|0)$/i.test(process.env.CI);

/**
 * The reason to skip a PostgreSQL test here, or false to run it: it runs wherever PostgreSQL can,
 * and always under CI, where a PostgreSQL that cannot be started fails the test instead.
 */
export function postgresSkip(): string | false {
  return (!inCI && postgresUnavailable()) || false;
}

/**
 * Defines a file's PostgreSQL tests, or skips the file saying why when PostgreSQL cannot run
 * here; under CI that is a failure instead.
 */
export function postgresTests(define: () => void): void {
  const unavailable = postgresUnavailable();
  if (!unavailable) {
    define();
  } else if (inCI) {
    tap.fail(`${unavailable}; under CI the PostgreSQL tests must run`);
  } else {
    tap.comment(unavailable);
    tap.plan(0, unavailable);
  }
}

interface Cluster {
  dir: string;
  dataDir: string;
  socketDir: string;
  port: number;
  /** Runs a PostgreSQL program as the cluster's owner (the postgres user when we are root). */
  exec(program: string, args: string[]): Promise<void>;
  running: boolean;
}

let cluster: Promise<Cluster> | null = null;
let stopAtExit: (() => void) | null = null;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.listen(0, '127.0.0.1', resolve).once('error', reject));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** PostgreSQL refuses to run as root: as root, its programs run as the postgres user. */
function asOwner(): { wrap(program: string, args: string[]): [string, string[]]; chown(dir: string): void } {
  if (process.getuid?.() !== 0) return { wrap: (program, args) => [program, args], chown: () => {} };
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return {
    wrap: (program, args) => ['runuser', ['-u', 'postgres', '--', program, ...args]],
    chown: (dir) => fs.chownSync(dir, uid, gid),
  };
}

/** initdb's options: a cluster for tests (nothing here needs to survive a machine's crash). */
const INITDB_OPTIONS = ['-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'];

/**
 * A fresh cluster's data folder to copy: initdb runs once per machine (per user, PostgreSQL
 * build and initdb options), not in each test process, which copies its result instead (initdb
 * takes a second or more, several on a busy machine; the copy a small fraction of that). The
 * template is made aside and renamed into place, so one that exists is complete; of processes
 * making it at once, the first to rename wins and the others drop theirs.
 */
async function templateDataDir(owner: ReturnType<typeof asOwner>): Promise<string> {
  const initdb = path.join(PG_BIN, 'initdb');
  const key = createHash('sha256')
    .update(JSON.stringify([initdb, fs.statSync(initdb).mtimeMs, INITDB_OPTIONS, process.getuid?.()]))
    .digest('hex')
    .slice(0, 16);
  const template = path.join(os.tmpdir(), `blog-pg-template-${key}`);
  const complete = () => ['PG_VERSION', 'global/pg_control'].every((file) => fs.existsSync(path.join(template, file)));
  if (complete()) return template;
  // Something cleaned part of the temporary folder away: start over.
  fs.rmSync(template, { recursive: true, force: true });
  const work = fs.mkdtempSync(`${template}.tmp-`);
  try {
    owner.chown(work);
    const [command, argv] = owner.wrap(initdb, ['-D', path.join(work, 'data'), ...INITDB_OPTIONS]);
    await run(command, argv, { cwd: work, timeout: 60_000 });
    try {
      fs.renameSync(path.join(work, 'data'), template);
    } catch (error) {
      if (!['EEXIST', 'ENOTEMPTY'].includes((error as NodeJS.ErrnoException).code ?? '') || !complete()) throw error;
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return template;
}

async function startCluster(): Promise<Cluster> {
  const unavailable = postgresUnavailable();
  if (unavailable) throw new Error(unavailable);
  const owner = asOwner();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blog-pg-'));
  const dataDir = path.join(dir, 'data');
  const socketDir = path.join(dir, 'socket');
  fs.mkdirSync(socketDir);
  owner.chown(dir);
  owner.chown(socketDir);
  const exec = async (program: string, args: string[]) => {
    const [command, argv] = owner.wrap(path.join(PG_BIN, program), args);
    await run(command, argv, { cwd: dir, timeout: 60_000 });
  };
  // Nothing here needs to survive a machine's crash: no fsync anywhere, the smallest useful server.
  // A commit is still written out before it is answered (synchronous_commit stays on): what a
  // test saw committed survives stopPostgres, an immediate stop. `cp -a` keeps the owner (the
  // postgres user when we are root) and the folder's 0700.
  await run('cp', ['-a', await templateDataDir(owner), dataDir], { timeout: 60_000 });
  const port = await freePort();
  const result: Cluster = { dir, dataDir, socketDir, port, exec, running: false };
  stopAtExit = () => {
    // Last resort when the process ends without the root test's teardown (a crash, a kill).
    if (result.running) {
      const [command, argv] = owner.wrap(path.join(PG_BIN, 'pg_ctl'), ['stop', '-D', dataDir, '-m', 'immediate', '-s']);
      spawnSync(command, argv, { stdio: 'ignore', timeout: 10_000 });
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stopAtExit);
  await startServer(result);
  tap.teardown(async () => {
    if (stopAtExit) process.removeListener('exit', stopAtExit);
    await stopServer(result);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return result;
}

async function startServer(c: Cluster): Promise<void> {
  const options = [
    `-p ${c.port}`,
    `-k ${c.socketDir}`,
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c max_connections=200',
    '-c shared_buffers=32MB',
  ].join(' ');
  await c.exec('pg_ctl', ['start', '-D', c.dataDir, '-w', '-t', '60', '-s', '-l', path.join(c.dir, 'server.log'), '-o', options]);
  c.running = true;
}

async function stopServer(c: Cluster): Promise<void> {
  if (!c.running) return;
  await c.exec('pg_ctl', ['stop', '-D', c.dataDir, '-m', 'immediate', '-w', '-s']);
  c.running = false;
}

function managedCluster(): Promise<Cluster> {
  cluster ??= startCluster();
  return cluster;
}

/** The URL of another database on the server that `url` names. */
function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** The URL of the server's maintenance database, where databases are created and dropped. */
async function adminUrl(): Promise<string> {
  if (process.env.TEST_DATABASE_URL) return process.env.TEST_DATABASE_URL;
  const c = await managedCluster();
  return `postgres://postgres@127.0.0.1:${c.port}/postgres`;
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: await adminUrl() });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/**
 * A fresh, empty database on the test PostgreSQL (started on first use), and its postgres://
 * URL; in UTF8 unless `encoding` says otherwise. On TEST_DATABASE_URL's server the database is
 * dropped when `t` ends; the managed cluster is removed whole when the test process ends.
 */
export async function startPostgres(t: Teardown, options: { encoding?: 'UTF8' | 'SQL_ASCII' | 'LATIN1' } = {}): Promise<string> {
  const name = `test_${randomBytes(6).toString('hex')}`;
  const admin = await adminUrl();
  const encoding = options.encoding ? ` ENCODING '${options.encoding}' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0` : '';
  await adminQuery(`CREATE DATABASE ${name}${encoding}`);
  if (process.env.TEST_DATABASE_URL) t.teardown(() => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  return withDatabase(admin, name);
}

let migratedTemplate: Promise<string> | null = null;

/**
 * A database of the managed cluster with every migration applied, made once per cluster: test
 * apps start on copies of it (CREATE DATABASE ... TEMPLATE copies files, a fraction of the time
 * migrating takes). No connection stays open to it: PostgreSQL copies only a database nobody uses.
 */
function migratedTemplateName(): Promise<string> {
  migratedTemplate ??= (async () => {
    const name = `template_${randomBytes(6).toString('hex')}`;
    await adminQuery(`CREATE DATABASE ${name}`);
    const handle = await openPostgres(withDatabase(await adminUrl(), name), { poolMax: 1 });
    await handle.close();
    return name;
  })();
  return migratedTemplate;
}

/**
 * A fresh database with every migration applied, and its URL, for a test app: a copy of a
 * migrated template on the managed cluster. On TEST_DATABASE_URL's server it is an empty one
 * (the app migrates it), as startPostgres makes.
 */
export async function startMigratedPostgres(t: Teardown): Promise<string> {
  if (process.env.TEST_DATABASE_URL) return startPostgres(t);
  const template = await migratedTemplateName();
  const name = `test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  return withDatabase(await adminUrl(), name);
}

/** True when this process started the test PostgreSQL, and so can stop and restart it. */
export function canControlPostgres(): boolean {
  return !process.env.TEST_DATABASE_URL;
}

function controlled(): Promise<Cluster> {
  if (!canControlPostgres()) throw new Error('the PostgreSQL at TEST_DATABASE_URL cannot be stopped or restarted by tests');
  if (!cluster) throw new Error('no test PostgreSQL started yet: call startPostgres first');
  return cluster;
}

/** Stops the test PostgreSQL at once (like a crash: `pg_ctl stop -m immediate`); its data stays. */
export async function stopPostgres(): Promise<void> {
  await stopServer(await controlled());
}

/** Starts the stopped test PostgreSQL again on the same port, with the same data. */
export async function restartPostgres(): Promise<void> {
  const c = await controlled();
  if (!c.running) await startServer(c);
}

/** The service's connection to `url` (a small pool unless told), closed when the test ends. */
export async function openTestPostgres(t: Teardown, url: string, options: PostgresOptions = { poolMax: 4 }): Promise<PostgresHandle> {
  const handle = await openPostgres(url, options);
  // tap reports a teardown's error without its message: say it (seen once, after a restart of the test PostgreSQL under load).
  t.teardown(() =>
    handle.close().catch((error: unknown) => {
      console.error('teardown: closing the PostgreSQL connections failed:', error);
      throw error;
    }),
  );
  return handle;
}
