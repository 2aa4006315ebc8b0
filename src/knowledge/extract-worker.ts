/**
 * Extractor process entry: receives one job, extracts the file, chunks its text and sends the
 * chunks back. Forked by extract-runner.ts, never imported (except for its types).
 */
import { Worker } from 'node:worker_threads';
import type { KnowledgeExtension } from './detect.js';
import { ExtractionError, extractChunks } from './extract.js';

export interface ExtractionJob {
  filePath: string;
  ext: KnowledgeExtension;
  /** Leads every chunk (chunking 10 MB of text takes a while, so it happens here too). */
  fileName: string;
  /** Most text taken from the file, in UTF-8 bytes. */
  maxTextBytes?: number;
  /** The extractor ends itself this long after receiving the job, whatever its parent does (default 65 s). */
  deadlineMs?: number;
}

export type ExtractionOutcome = ({ ok: true; chunks: string[] } | { ok: false; message: string }) & {
  /** The extractor's peak resident memory, in MB (for logs and measurements). */
  peakMemoryMb?: number;
};

/** Exit code of an extractor whose parent closed the channel without waiting for the outcome. */
const ORPHANED_EXIT_CODE = 70;

/**
 * A parse can hold this process's event loop for seconds (mammoth and pdf.js are synchronous
 * for long stretches), so the IPC channel's `disconnect` alone would notice a dead parent
 * late. A watchdog thread runs beside it and ends the process as soon as its parent is gone
 * (the parent pid changes when the process is orphaned, however the parent died) or the
 * deadline has passed: no extractor outlives the server that started it.
 */
function startWatchdog(deadlineMs: number): void {
  const source = `
    const { workerData } = require('node:worker_threads');
    const { pid, parentPid, deadline } = workerData;
    // process.exit() here would end only this thread: the signal ends the whole process.
    setInterval(() => {
      if (process.ppid !== parentPid || Date.now() > deadline) process.kill(pid, 'SIGKILL');
    }, 100);`;
  const watchdog = new Worker(source, {
    eval: true,
    // Plain JavaScript: no loader hooks needed, nor wanted, in the watchdog.
    execArgv: [],
    workerData: { pid: process.pid, parentPid: process.ppid, deadline: Date.now() + deadlineMs },
  });
  watchdog.unref();
}

/** What V8 and Buffer say when an allocation fails: the memory limit was reached. */
const isOutOfMemory = (err: unknown) =>
  err instanceof RangeError && /allocation failed|Invalid array length|Invalid string length|Invalid typed array length/i.test(err.message);

async function run({ filePath, ext, fileName, maxTextBytes }: ExtractionJob): Promise<ExtractionOutcome> {
  try {
    return { ok: true, chunks: await extractChunks(filePath, ext, fileName, { maxTextBytes }) };
  } catch (err) {
    if (err instanceof ExtractionError) return { ok: false, message: err.message };
    if (isOutOfMemory(err) || isOutOfMemory((err as Error)?.cause)) {
      return { ok: false, message: 'The file could not be read: extracting it needed more memory than allowed' };
    }
    // Not a bad file but a bug: keep the details for the server log, not for the uploader.
    console.error('Unexpected failure extracting knowledge file', err);
    return { ok: false, message: 'The file could not be read' };
  }
}

// The server went away (its end of the channel closed): nobody wants the outcome any more.
process.once('disconnect', () => process.exit(ORPHANED_EXIT_CODE));

process.once('message', async (job: ExtractionJob) => {
  startWatchdog(job.deadlineMs ?? 65_000);
  const outcome = await run(job);
  outcome.peakMemoryMb = Math.round(process.resourceUsage().maxRSS / 1024);
  // Disconnecting once the outcome is sent lets the process end on its own.
  process.send!(outcome, () => process.disconnect());
});
