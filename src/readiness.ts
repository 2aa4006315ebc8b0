import fs from 'node:fs';
import type { DatabaseLocation } from './db/backend.js';
import type { AppGenerator, GeneratorStatus } from './generation/service.js';
import type { JobLoopState, JobLoopStatus } from './jobs/loop.js';
import type { RetrievalMode } from './knowledge/hybrid.js';
import type { IndexerStatus } from './knowledge/indexer.js';
import type { ObjectStore, StoreDescription } from './knowledge/storage.js';

export interface Readiness {
  ready: boolean;
  /** `locked`: answers reads, but another program holds the write lock (writes answer 503 DATABASE_BUSY). */
  database: 'ok' | 'locked' | 'unavailable';
  /** Which database the service uses (DATABASE_URL, its password hidden). */
  databaseLocation: DatabaseLocation;
  /**
   * `full`: the disk (or the database's page limit) is full: writes answer 507, background work
   * waits. `unreachable`: the file store (STORAGE_URL) does not answer: uploads and deletes
   * answer 503 STORAGE_UNAVAILABLE, indexing waits.
   */
  storage: 'ok' | 'full' | 'unreachable';
  /** Where knowledge files are stored (no secrets); absent when nothing watches a store. */
  store?: StoreDescription;
  /** The job loop: `starting` while its start is retried (not ready), `waiting` while it cannot write. */
  jobs: JobLoopState;
  /** Knowledge indexing: `waiting` while it cannot write its chunks. */
  indexing: 'ok' | 'waiting';
  generator: GeneratorStatus;
  /** Knowledge search: `hybrid` while the embedding model (named) serves, `lexical` otherwise. */
  retrieval: RetrievalStatus;
}

export interface RetrievalStatus {
  mode: RetrievalMode;
  /** The embedding model configured (OLLAMA_EMBED_MODEL); absent when none is. */
  model?: string;
}

/** A database that takes longer to answer `select 1` is reported unavailable (a load balancer's check must not hang). */
const PING_TIMEOUT_MS = 2000;

function answersWithin(ping: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error('database ping timed out')), ms)));
  ping.catch(() => {}); // answered by the race, or too late to matter
  return Promise.race([ping, late]).finally(() => clearTimeout(timer));
}

/** How long a request that found the disk full keeps `storage: full` without newer news. */
const STORAGE_FULL_MEMORY_MS = 30_000;

/**
 * Free space under which the data folder's disk counts as full: room for a few pages of the
 * database and no more (a server just restarted on a full disk has not failed a write yet).
 */
export const DISK_FULL_BELOW_BYTES = 1024 * 1024;

/** Bytes free for this process on the file system holding `dir`; null when that cannot be told. */
export async function freeBytes(dir: string): Promise<number | null> {
  try {
    const stats = await fs.promises.statfs(dir);
    return stats.bavail * stats.bsize;
  } catch {
    return null;
  }
}

/**
 * What /ready reports: the database must answer and the job loop must have started; a full
 * disk, a locked database, an unreachable file store and the generator are reported, never
 * blocking (reads still work, and a replica taken out of rotation could not even be used to
 * delete files; a shared store that is down would take every replica out at once).
 */
export class ReadinessService {
  private jobs: (() => JobLoopStatus) | null = null;
  private indexer: (() => IndexerStatus) | null = null;
  private store: Pick<ObjectStore, 'description' | 'reachable'> | null = null;
  private retrieval: () => Promise<RetrievalStatus> = async () => ({ mode: 'lexical' });
  private storageFullAt = -Infinity;
  private dataDir: string | null = null;

  constructor(
    private readonly database: { ping(): Promise<void>; location: DatabaseLocation },
    private readonly generator: Pick<AppGenerator, 'status'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** The job loop whose state is reported (and must have started). */
  watchJobs(status: () => JobLoopStatus): void {
    this.jobs = status;
  }

  watchIndexer(status: () => IndexerStatus): void {
    this.indexer = status;
  }

  /** The store of knowledge files, whose reachability is reported. */
  watchStore(store: Pick<ObjectStore, 'description' | 'reachable'>): void {
    this.store = store;
  }

  /** What knowledge search uses (no hosts: the embedding model's name at most). */
  watchRetrieval(status: () => Promise<RetrievalStatus>): void {
    this.retrieval = status;
  }

  /** The folder whose disk's free space is reported (DATA_DIR: the SQLite database, files, uploads in progress). */
  watchDisk(dir: string): void {
    this.dataDir = dir;
  }

  /** A request found the disk full. */
  noteStorageFull(): void {
    this.storageFullAt = this.now();
  }

  async check(): Promise<Readiness> {
    let database: Readiness['database'] = 'ok';
    try {
      await answersWithin(this.database.ping(), PING_TIMEOUT_MS);
    } catch {
      database = 'unavailable';
    }
    const jobs = this.jobs?.() ?? null;
    const indexer = this.indexer?.() ?? null;
    const reasons = [jobs?.waiting?.reason, indexer?.waiting?.reason];
    if (database === 'ok' && reasons.includes('database-busy')) database = 'locked';
    const free = this.dataDir === null ? null : await freeBytes(this.dataDir);
    const full = reasons.includes('storage-full') || this.now() - this.storageFullAt < STORAGE_FULL_MEMORY_MS || (free !== null && free < DISK_FULL_BELOW_BYTES);
    const jobsState = jobs?.state ?? 'stopped';
    const unreachable = this.store ? !(await this.store.reachable()) : false;
    // The generator never makes the service unready: builtin always serves in auto mode.
    return {
      // A job loop whose start waits for disk space does not take the server out of rotation:
      // its readers are served all the same.
      ready: database !== 'unavailable' && (jobsState !== 'starting' || jobs?.waiting?.reason === 'storage-full'),
      database,
      databaseLocation: this.database.location,
      storage: unreachable ? 'unreachable' : full ? 'full' : 'ok',
      ...(this.store ? { store: this.store.description } : {}),
      jobs: jobsState,
      indexing: indexer?.waiting ? 'waiting' : 'ok',
      generator: await this.generator.status(),
      retrieval: await this.retrieval(),
    };
  }
}

/**
 * The report for a caller who may not learn the set-up: the states only (`ok`, `full`,
 * `waiting`...), without where the database, the file store and Ollama are (a stranger must
 * not learn file paths, hosts, users, buckets or endpoints from a health check).
 */
export type ReadinessStates = Omit<Readiness, 'databaseLocation' | 'store' | 'generator'> & {
  generator: Omit<GeneratorStatus, 'ollama'> & { ollama: Omit<GeneratorStatus['ollama'], 'host'> };
};

export function statesOnly(report: Readiness): ReadinessStates {
  const { databaseLocation: _location, store: _store, generator, ...states } = report;
  const { host: _host, ...ollama } = generator.ollama;
  return { ...states, generator: { ...generator, ollama } };
}
