/**
 * The background checkpointer (see `startBackgroundCheckpoints` in sqlite.ts): a worker thread
 * with its own connection that copies the write-ahead log into the database file every
 * `intervalMs`, so no request's commit pays for it. PASSIVE never waits for readers or
 * writers; what it cannot copy now is copied on a later turn.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { file, intervalMs } = workerData as { file: string; intervalMs: number };
const db = new Database(file, { fileMustExist: true });
db.pragma('busy_timeout = 0');

const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy, or the disk is full: the main connection reports those; this tries again later.
  }
};
const timer = setInterval(checkpoint, intervalMs);

parentPort!.once('message', () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort!.close();
});
