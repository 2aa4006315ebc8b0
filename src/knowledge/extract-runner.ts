import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fork } from 'node:child_process';
import os from 'node:os';
import type { KnowledgeExtension } from './detect.js';
import { ExtractionError } from './extract.js';
import type { ExtractionJob, ExtractionOutcome } from './extract-worker.js';

const DEFAULT_TIMEOUT_MS = 60_000;

/** Generous for a 10 MiB PDF, whose parse needs a few hundred MB at most. */
const EXTRACTOR_HEAP_MB = 1024;

/** Indexing is background work: the extractor yields the CPU to the server answering requests. */
const EXTRACTOR_NICENESS = 10;

// `.ts` when running from source (tap's TypeScript loader reaches the child through the
// inherited execArgv), `.js` once compiled to dist/.
const EXTRACTOR_PATH = fileURLToPath(new URL(`./extract-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url));

/**
 * extractText() then chunkText() in a short-lived child process: the index's chunks of a file,
 * computed off the event loop and at a lower CPU priority, so parsing a large PDF neither
 * blocks nor slows requests much. Every failure rejects with an ExtractionError: a bad file, an
 * extractor that crashed, ran out of memory or exited early, or one still busy after
 * `timeoutMs` or when `signal` aborts (it is then killed).
 */
export async function extractChunksInWorker(
  filePath: string,
  ext: KnowledgeExtension,
  fileName: string,
  { timeoutMs = DEFAULT_TIMEOUT_MS, signal }: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const job: ExtractionJob = { filePath, ext, fileName };
    // A heap cap keeps a hostile or pathological file from exhausting the server's memory:
    // the extractor dies out of memory, which rejects as an ExtractionError.
    const child = fork(EXTRACTOR_PATH, [], {
      execArgv: [...process.execArgv, `--max-old-space-size=${EXTRACTOR_HEAP_MB}`],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let settled = false;
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // The signal outlives this extraction (it is the indexer's shutdown): leave it clean.
      signal?.removeEventListener('abort', cancel);
      child.kill('SIGKILL');
      finish();
    };
    const fail = (message: string, cause?: unknown) => settle(() => reject(new ExtractionError(message, { cause })));
    const cancel = () => fail('Extraction cancelled');

    const timer = setTimeout(() => fail(`Extraction took longer than ${timeoutMs / 1000} s`), timeoutMs);
    if (signal?.aborted) return cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    child.once('message', (outcome: ExtractionOutcome) => (outcome.ok ? settle(() => resolve(outcome.chunks)) : fail(outcome.message)));
    child.once('error', (err) => fail('The file could not be read: the extractor could not run', err));
    // Only reached when the extractor ends without sending an outcome.
    child.once('exit', (code, killedBy) => fail(`The file could not be read: the extractor stopped (${killedBy ?? `exit code ${code}`})`));
    try {
      os.setPriority(child.pid!, EXTRACTOR_NICENESS);
    } catch {
      // Not permitted on some systems: the extractor then runs at normal priority.
    }
    child.send(job);
  });
}
