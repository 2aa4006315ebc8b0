import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { isStorageFull } from '../errors.js';

export class DataDirLockedError extends Error {
  constructor(dataDir: string, holder: string) {
    super(`Another server (${holder}) is already running on DATA_DIR ${dataDir}; stop it first or use another DATA_DIR`);
    this.name = 'DataDirLockedError';
  }
}

/**
 * Claims DATA_DIR for this server process, and returns its release. One server per data folder
 * is what lets the job loop return every `running` task to pending at start-up.
 *
 * The claim is an exclusive SQLite lock on DATA_DIR/server.lock, held open for the process's
 * life: the kernel drops it when the process dies, however it dies, and it holds across
 * containers sharing a volume, where every server is pid 1 and a pid file proves nothing.
 * The holder's description is written beside it, for the refusal message only.
 *
 * It takes no disk space (a server restarted on a full disk must start, to serve its readers):
 * the lock is the file system's lock on the file, the journal is kept in memory (no
 * server.lock-journal is made), the transaction never writes, and the holder's description is
 * left out when it cannot be written.
 */
export function lockDataDir(dataDir: string, holder = `pid ${process.pid} on ${process.env.HOSTNAME ?? 'this host'}`): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const lockFile = path.join(dataDir, 'server.lock');
  const holderFile = path.join(dataDir, 'server.lock.holder');
  // No busy wait: a lock that is taken is a refusal, now.
  const lock = new Database(lockFile, { timeout: 0 });
  try {
    lock.pragma('journal_mode = MEMORY');
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    lock.close();
    if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
    let current = 'another process';
    try {
      current = fs.readFileSync(holderFile, 'utf8').trim() || current;
    } catch {
      // The holder wrote nothing yet: the lock alone is proof enough.
    }
    throw new DataDirLockedError(dataDir, current);
  }
  try {
    fs.writeFileSync(holderFile, holder);
  } catch (error) {
    if (!isStorageFull(error)) {
      lock.close();
      throw error;
    }
    // Opened (and emptied) before the write failed: a refusal then names no stale holder.
  }
  return () => {
    if (lock.open) lock.close();
  };
}
