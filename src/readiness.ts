import type { DbHandle } from './db/client.js';
import type { AppGenerator, GeneratorStatus } from './generation/service.js';
import type { JobLoopState, JobLoopStatus } from './jobs/loop.js';
import type { IndexerStatus } from './knowledge/indexer.js';

export interface Readiness {
  ready: boolean;
  /** `locked`: answers reads, but another program holds the write lock (writes answer 503 DATABASE_BUSY). */
  database: 'ok' | 'locked' | 'unavailable';
  /** `full`: the disk (or the database's page limit) is full: writes answer 507, background work waits. */
  storage: 'ok' | 'full';
  /** The job loop: `starting` while its start is retried (not ready), `waiting` while it cannot write. */
  jobs: JobLoopState;
  /** Knowledge indexing: `waiting` while it cannot write its chunks. */
  indexing: 'ok' | 'waiting';
  generator: GeneratorStatus;
}

/** How long a request that found the disk full keeps `storage: full` without newer news. */
const STORAGE_FULL_MEMORY_MS = 30_000;

/**
 * What /ready reports: the database must answer and the job loop must have started; a full
 * disk, a locked database and the generator are reported, never blocking (reads still work,
 * and a replica taken out of rotation could not even be used to delete files).
 */
export class ReadinessService {
  private jobs: (() => JobLoopStatus) | null = null;
  private indexer: (() => IndexerStatus) | null = null;
  private storageFullAt = -Infinity;

  constructor(
    private readonly database: Pick<DbHandle, 'ping'>,
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

  /** A request found the disk full. */
  noteStorageFull(): void {
    this.storageFullAt = this.now();
  }

  async check(): Promise<Readiness> {
    let database: Readiness['database'] = 'ok';
    try {
      this.database.ping();
    } catch {
      database = 'unavailable';
    }
    const jobs = this.jobs?.() ?? null;
    const indexer = this.indexer?.() ?? null;
    const reasons = [jobs?.waiting?.reason, indexer?.waiting?.reason];
    if (database === 'ok' && reasons.includes('database-busy')) database = 'locked';
    const full = reasons.includes('storage-full') || this.now() - this.storageFullAt < STORAGE_FULL_MEMORY_MS;
    const jobsState = jobs?.state ?? 'stopped';
    // The generator never makes the service unready: builtin always serves in auto mode.
    return {
      ready: database !== 'unavailable' && jobsState !== 'starting',
      database,
      storage: full ? 'full' : 'ok',
      jobs: jobsState,
      indexing: indexer?.waiting ? 'waiting' : 'ok',
      generator: await this.generator.status(),
    };
  }
}
