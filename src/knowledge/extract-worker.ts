/**
 * Extractor process entry: receives one job, extracts the file, chunks its text and sends the
 * chunks back. Forked by extract-runner.ts, never imported (except for its types).
 */
import { Worker } from 'node:worker_threads';
import { DEADLINE_ENV, ExtractionError, PARENT_PID_ENV, type ExtractionJob, type ExtractionOutcome } from './extractor-protocol.js';

/** Exit code of an extractor whose parent closed the channel without waiting for the outcome. */
const ORPHANED_EXIT_CODE = 70;

const DEFAULT_DEADLINE_MS = 65_000;

/**
 * A parse can hold this process's event loop for seconds (mammoth and pdf.js are synchronous
 * for long stretches), so the IPC channel's `disconnect` alone would notice a dead parent
 * late. A watchdog thread runs beside it and ends the process as soon as its parent is gone
 * (the parent pid changes when the process is orphaned, however the parent died) or the
 * deadline has passed: no extractor outlives the server that started it.
 */
function startWatchdog(parentPid: number, deadlineMs: number): Worker {
  const source = `
    const { workerData, parentPort } = require('node:worker_threads');
    const { pid, parentPid } = workerData;
    let { deadline } = workerData;
    // A job may bring a nearer deadline.
    parentPort.on('message', (nearer) => { deadline = Math.min(deadline, nearer); });
    // process.exit() here would end only this thread: the signal ends the whole process.
    setInterval(() => {
      if (process.ppid !== parentPid || Date.now() > deadline) process.kill(pid, 'SIGKILL');
    }, 100);`;
  const watchdog = new Worker(source, {
    eval: true,
    // Plain JavaScript: no loader hooks needed, nor wanted, in the watchdog.
    execArgv: [],
    workerData: { pid: process.pid, parentPid, deadline: Date.now() + deadlineMs },
  });
  watchdog.unref();
  return watchdog;
}

/*
 * The parent's pid comes from the parent, not from process.ppid once the job arrives: a server
 * that died between sending the job and this process loading its modules (seconds on a busy
 * machine) would leave an orphan whose "parent" is already pid 1 or a subreaper, and whose
 * watchdog then never sees a change. So it is checked here, first, before the parsers load
 * (they are imported only below, dynamically).
 */
const parentPid = Number(process.env[PARENT_PID_ENV]) || process.ppid;
if (process.ppid !== parentPid) process.exit(ORPHANED_EXIT_CODE);
const watchdog = startWatchdog(parentPid, Number(process.env[DEADLINE_ENV]) || DEFAULT_DEADLINE_MS);
const { extractChunks } = await import('./extract.js');

/**
 * What V8 and Buffer say when an allocation fails: the memory limit was reached. Node 24's
 * Buffer says "Failed to allocate memory" (ERR_MEMORY_ALLOCATION_FAILED).
 */
const isOutOfMemory = (err: unknown) =>
  err instanceof RangeError &&
  ((err as NodeJS.ErrnoException).code === 'ERR_MEMORY_ALLOCATION_FAILED' ||
    /allocation failed|failed to allocate|Invalid array length|Invalid string length|Invalid typed array length/i.test(err.message));

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
  if (job.deadlineMs !== undefined) watchdog.postMessage(Date.now() + job.deadlineMs);
  const outcome = await run(job);
  outcome.peakMemoryMb = Math.round(process.resourceUsage().maxRSS / 1024);
  // Disconnecting once the outcome is sent lets the process end on its own.
  process.send!(outcome, () => process.disconnect());
});
