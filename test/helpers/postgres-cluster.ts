import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';

// ---------------------------------------------------------------------------------------------
// Throwaway PostgreSQL clusters for tests, with no test framework in sight: a copy of a data
// folder initdb made once, in a temporary folder, on a free TCP port, its unix socket in the
// same folder. Two kinds use them: the suite's shared cluster, started once before any test file
// runs and stopped after the last (.taprc's `before` and `after`), and a test file's own cluster
// (test/helpers/postgres.ts), for the files that stop and restart their server.
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

export interface Cluster {
  dir: string;
  dataDir: string;
  socketDir: string;
  port: number;
  running: boolean;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.listen(0, '127.0.0.1', resolve).once('error', reject));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

type Owner = { wrap(program: string, args: string[]): [string, string[]]; chown(dir: string): void };
let cachedOwner: Owner | null = null;

/** PostgreSQL refuses to run as root: as root, its programs run as the postgres user (looked up once). */
function asOwner(): Owner {
  cachedOwner ??= lookUpOwner();
  return cachedOwner;
}

function lookUpOwner(): Owner {
  if (process.getuid?.() !== 0) return { wrap: (program, args) => [program, args], chown: () => {} };
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return {
    wrap: (program, args) => ['runuser', ['-u', 'postgres', '--', program, ...args]],
    chown: (dir) => fs.chownSync(dir, uid, gid),
  };
}

/** Runs one of PostgreSQL's programs as the cluster's owner (the postgres user when we are root). */
async function pgProgram(cwd: string, program: string, args: string[]): Promise<void> {
  const [command, argv] = asOwner().wrap(path.join(PG_BIN, program), args);
  await run(command, argv, { cwd, timeout: 60_000 });
}

/** initdb's options: a cluster for tests (nothing here needs to survive a machine's crash). */
const INITDB_OPTIONS = ['-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'];

/**
 * A fresh cluster's data folder to copy: initdb runs once per machine (per user, PostgreSQL
 * build and initdb options), not for each cluster, which copies its result instead (initdb
 * takes a second or more, several on a busy machine; the copy a small fraction of that). The
 * template is made aside and renamed into place, so one that exists is complete; of processes
 * making it at once, the first to rename wins and the others drop theirs.
 */
async function templateDataDir(owner: Owner): Promise<string> {
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

/** A new cluster's folders, its data copied from the template; not started yet. */
export async function createCluster(): Promise<Cluster> {
  const unavailable = postgresUnavailable();
  if (unavailable) throw new Error(unavailable);
  const owner = asOwner();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blog-pg-'));
  const dataDir = path.join(dir, 'data');
  const socketDir = path.join(dir, 'socket');
  fs.mkdirSync(socketDir);
  owner.chown(dir);
  owner.chown(socketDir);
  // `cp -a` keeps the owner (the postgres user when we are root) and the folder's 0700.
  await run('cp', ['-a', await templateDataDir(owner), dataDir], { timeout: 60_000 });
  return { dir, dataDir, socketDir, port: await freePort(), running: false };
}

export async function startServer(c: Cluster): Promise<void> {
  // Nothing here needs to survive a machine's crash: no fsync anywhere, the smallest useful server.
  // A commit is still written out before it is answered (synchronous_commit stays on): what a
  // test saw committed survives stopServer, an immediate stop.
  const options = [
    `-p ${c.port}`,
    `-k ${c.socketDir}`,
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    '-c full_page_writes=off',
    // Two test files at once on the shared cluster, each with several pools.
    '-c max_connections=300',
    '-c shared_buffers=32MB',
  ].join(' ');
  await pgProgram(c.dir, 'pg_ctl', ['start', '-D', c.dataDir, '-w', '-t', '60', '-s', '-l', path.join(c.dir, 'server.log'), '-o', options]);
  c.running = true;
}

export async function stopServer(c: Cluster): Promise<void> {
  if (!c.running) return;
  await pgProgram(c.dir, 'pg_ctl', ['stop', '-D', c.dataDir, '-m', 'immediate', '-w', '-s']);
  c.running = false;
}

/** Stops a cluster's server and removes its folder, synchronously (for an `exit` handler). */
export function removeClusterNow(c: Pick<Cluster, 'dir' | 'dataDir'>): void {
  if (fs.existsSync(path.join(c.dataDir, 'postmaster.pid'))) {
    const [command, argv] = asOwner().wrap(path.join(PG_BIN, 'pg_ctl'), ['stop', '-D', c.dataDir, '-m', 'immediate', '-s']);
    spawnSync(command, argv, { stdio: 'ignore', timeout: 10_000 });
  }
  fs.rmSync(c.dir, { recursive: true, force: true });
}

export const adminUrlOf = (c: Pick<Cluster, 'port'>) => `postgres://postgres@127.0.0.1:${c.port}/postgres`;

/** The URL of another database on the server that `url` names. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function adminQuery(adminUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/**
 * A database with every migration applied, for copies (CREATE DATABASE ... TEMPLATE copies
 * files, a fraction of the time migrating takes). No connection stays open to it: PostgreSQL
 * copies only a database nobody uses.
 */
export async function createMigratedTemplate(adminUrl: string): Promise<string> {
  // Imported here: the service's modules load only where a template is made.
  const { openPostgres } = await import('../../src/db/postgres.js');
  const name = `template_${randomBytes(6).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  const handle = await openPostgres(withDatabase(adminUrl, name), { poolMax: 1 });
  await handle.close();
  return name;
}

// ---------------------------------------------------------------------------------------------
// The suite's shared cluster. Starting a cluster and migrating its template took each test file
// on PostgreSQL 1.5-3 s; the shared one is started once, and a file's first database is one copy
// of the template. Its address is in a state file named after the tap process that runs the
// suite (the parent of the `before` script and of every test file), so two runs in one checkout
// each have their own. A file that finds no state, or a server no longer running, starts a
// cluster of its own as before.
// ---------------------------------------------------------------------------------------------

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const STATE_DIR = path.join(root, 'node_modules/.cache/test-postgres');
const stateFile = (runnerPid: number) => path.join(STATE_DIR, `${runnerPid}.json`);

export interface SharedCluster {
  dir: string;
  dataDir: string;
  port: number;
  adminUrl: string;
  /** The migrated template database. */
  template: string;
}

function readState(runnerPid: number): SharedCluster | null {
  try {
    return JSON.parse(fs.readFileSync(stateFile(runnerPid), 'utf8')) as SharedCluster;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the cluster's server is running (its postmaster's pid, from its data folder, is alive). */
function running(c: Pick<Cluster, 'dataDir'>): boolean {
  try {
    return alive(Number(fs.readFileSync(path.join(c.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]));
  } catch {
    return false;
  }
}

/** The shared cluster of the run this test process belongs to, when it started one that still runs. */
export function sharedCluster(): SharedCluster | null {
  if (process.env.TEST_DATABASE_URL || process.env.TEST_SHARED_POSTGRES === '0') return null;
  const state = readState(process.ppid);
  return state && running(state) ? state : null;
}

/**
 * Starts the shared cluster of the run whose tap process is `runnerPid` (this script's parent);
 * those of runs that ended without their `after` (killed) go first. Nothing to do with
 * TEST_DATABASE_URL, TEST_SHARED_POSTGRES=0, or without PostgreSQL.
 */
export async function startSharedCluster(runnerPid = process.ppid): Promise<SharedCluster | null> {
  for (const entry of fs.existsSync(STATE_DIR) ? fs.readdirSync(STATE_DIR) : []) {
    const pid = Number(entry.replace(/\.json$/, ''));
    if (pid === runnerPid || !alive(pid)) stopSharedCluster(pid);
  }
  if (process.env.TEST_DATABASE_URL || process.env.TEST_SHARED_POSTGRES === '0' || postgresUnavailable()) return null;
  const cluster = await createCluster();
  try {
    await startServer(cluster);
    const adminUrl = adminUrlOf(cluster);
    const shared: SharedCluster = { dir: cluster.dir, dataDir: cluster.dataDir, port: cluster.port, adminUrl, template: await createMigratedTemplate(adminUrl) };
    fs.mkdirSync(STATE_DIR, { recursive: true });
    fs.writeFileSync(stateFile(runnerPid), JSON.stringify(shared));
    return shared;
  } catch (error) {
    removeClusterNow(cluster);
    throw error;
  }
}

/** Stops the shared cluster of the run whose tap process is `runnerPid`, and removes it. */
export function stopSharedCluster(runnerPid = process.ppid): void {
  const state = readState(runnerPid);
  fs.rmSync(stateFile(runnerPid), { force: true });
  if (state) removeClusterNow(state);
}
