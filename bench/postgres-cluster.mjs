// A throwaway PostgreSQL for the benchmarks: a cluster started in a temporary folder (initdb,
// pg_ctl, a free TCP port on 127.0.0.1, its unix socket in the same folder), stopped and removed
// at the end through lib.mjs's cleanups (and, as a last resort, when the process exits). As root,
// PostgreSQL's programs run as the `postgres` user (PostgreSQL refuses to run as root).
//
// With BENCH_DATABASE_URL set, that server is used instead: databases are created on it (the URL
// must be allowed to CREATE DATABASE) and dropped at the end; its settings are its own.
//
// Unlike the tests' cluster, this one keeps PostgreSQL's durability defaults (fsync on,
// synchronous_commit on): the figures are what a deployment with default settings sees.

import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort, onCleanup } from './lib.mjs';

const run = promisify(execFile);

/** Where PostgreSQL's programs are (PG_BIN overrides; PostgreSQL 15 as Debian installs it). */
export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Why no PostgreSQL can be had here, or null when one can (BENCH_DATABASE_URL, or initdb and pg_ctl). */
export function postgresUnavailable() {
  if (process.env.BENCH_DATABASE_URL) return null;
  const missing = ['initdb', 'pg_ctl', 'postgres'].filter((name) => !fs.existsSync(path.join(PG_BIN, name)));
  if (!missing.length) return null;
  return `BENCH_DATABASE_URL is unset and ${missing.join(', ')} not found in ${PG_BIN} (set PG_BIN or BENCH_DATABASE_URL)`;
}

/** Runs PostgreSQL's programs as the owner of the cluster: the postgres user when this process is root. */
function asOwner() {
  if (process.getuid?.() !== 0) return { wrap: (program, args) => [program, args], chown: () => {} };
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { wrap: (program, args) => ['runuser', ['-u', 'postgres', '--', program, ...args]], chown: (dir) => fs.chownSync(dir, uid, gid) };
}

/** The URL of database `name` on the server `url` names. */
export function withDatabase(url, name) {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** Runs one statement on a connection of its own. */
export async function query(url, text, values) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

async function startCluster(settings) {
  const owner = asOwner();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blog-bench-pg-'));
  const dataDir = path.join(dir, 'data');
  const socketDir = path.join(dir, 'socket');
  fs.mkdirSync(socketDir);
  owner.chown(dir);
  owner.chown(socketDir);
  const exec = async (program, args) => {
    const [command, argv] = owner.wrap(path.join(PG_BIN, program), args);
    await run(command, argv, { cwd: dir, timeout: 120_000 });
  };
  let running = false;
  const removeAll = () => fs.rmSync(dir, { recursive: true, force: true });
  // Last resort if the process ends without its cleanups (a crash): stop at once, remove the folder.
  const atExit = () => {
    if (running) {
      const [command, argv] = owner.wrap(path.join(PG_BIN, 'pg_ctl'), ['stop', '-D', dataDir, '-m', 'immediate', '-s']);
      spawnSync(command, argv, { stdio: 'ignore', timeout: 10_000 });
    }
    removeAll();
  };
  process.once('exit', atExit);
  const stop = async () => {
    process.removeListener('exit', atExit);
    if (running) {
      // `fast`: no waiting for clients (the servers are stopped by then anyway).
      await exec('pg_ctl', ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '30', '-s']).catch(() => exec('pg_ctl', ['stop', '-D', dataDir, '-m', 'immediate', '-s']));
      running = false;
    }
    removeAll();
  };
  onCleanup(stop);

  // initdb's --no-sync only skips flushing the freshly created files; the server's fsync stays on.
  await exec('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
  const port = await freePort();
  const options = [`-p ${port}`, `-k ${socketDir}`, '-c listen_addresses=127.0.0.1', ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
  const startArgs = ['start', '-D', dataDir, '-w', '-t', '60', '-s', '-l', path.join(dir, 'server.log'), '-o', options];
  await exec('pg_ctl', startArgs);
  running = true;
  const admin = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const version = (await query(admin, 'show server_version')).rows[0].server_version;
  const postmaster = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return {
    admin,
    port,
    dir,
    stop,
    describe: `PostgreSQL ${version} started here on 127.0.0.1:${port} (initdb in ${dir}; fsync and synchronous_commit at their defaults)`,
    managed: true,
    cpuSeconds: () => clusterCpuSeconds(postmaster),
    /** An outage: the cluster stops (`fast`: connections are cut) until resume() starts it again on the same port. */
    async pause() {
      await exec('pg_ctl', ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '30', '-s']);
      running = false;
    },
    async resume() {
      await exec('pg_ctl', startArgs);
      running = true;
    },
  };
}

/** Fields of /proc/<pid>/stat after the command name (which may hold spaces), or null. */
function procStat(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * CPU time (user + system, in seconds) the cluster has used so far: the postmaster's own, that of
 * its children it has reaped (backends that ended), and that of its live children (connections,
 * background writer, autovacuum, ...). Null when /proc cannot say.
 */
export function clusterCpuSeconds(postmaster) {
  const main = procStat(postmaster);
  if (!main) return null;
  // Fields from the state on: state 0, ppid 1, ..., utime 11, stime 12, cutime 13, cstime 14 (clock ticks of 1/100 s).
  let ticks = Number(main[11]) + Number(main[12]) + Number(main[13]) + Number(main[14]);
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = procStat(entry);
    if (fields && Number(fields[1]) === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / 100;
}

/**
 * A PostgreSQL server for the benchmark: BENCH_DATABASE_URL's, or a cluster started here.
 * Returns { admin (URL of its maintenance database), managed (whether this process started it,
 * so may change its settings), describe, cpuSeconds() (the cluster's CPU time so far, null on
 * BENCH_DATABASE_URL's server), createDatabase(prefix) -> URL of a fresh empty database }.
 * Databases created on BENCH_DATABASE_URL's server are dropped at the end; a managed cluster is
 * removed whole.
 */
export async function benchPostgres({ settings = {} } = {}) {
  const unavailable = postgresUnavailable();
  if (unavailable) throw new Error(`PostgreSQL not available: ${unavailable}`);
  const external = process.env.BENCH_DATABASE_URL;
  const server = external
    ? { admin: external, managed: false, cpuSeconds: () => null, describe: `the PostgreSQL at BENCH_DATABASE_URL (${(await query(external, 'show server_version')).rows[0].server_version})` }
    : await startCluster(settings);
  return {
    ...server,
    async createDatabase(prefix = 'bench') {
      const name = `${prefix}_${randomBytes(5).toString('hex')}`;
      await query(server.admin, `CREATE DATABASE ${name}`);
      if (external) onCleanup(() => query(server.admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      return withDatabase(server.admin, name);
    },
  };
}
