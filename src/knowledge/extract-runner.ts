import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { KnowledgeExtension } from './detect.js';
import { ExtractionError } from './extract.js';
import type { ExtractionJob, ExtractionOutcome } from './extract-worker.js';

const DEFAULT_TIMEOUT_MS = 60_000;

/** Generous for a 10 MiB PDF, whose parse needs a few hundred MB at most. */
const WORKER_HEAP_MB = 1024;

// `.ts` when running from source (tap's TypeScript loader reaches the worker through the
// inherited execArgv), `.js` once compiled to dist/.
const WORKER_URL = new URL(`./extract-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/**
 * extractText() then chunkText() in a short-lived worker thread: the index's chunks of a file,
 * computed off the event loop, so parsing a large PDF never blocks requests. Every failure
 * rejects with an ExtractionError: a bad file, a worker that crashed or exited early, or one
 * still busy after `timeoutMs` (it is then terminated).
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
    // the worker dies with an out-of-memory error, which rejects as an ExtractionError.
    const worker = new Worker(WORKER_URL, { workerData: job, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    let settled = false;
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      finish();
    };
    const fail = (message: string, cause?: unknown) => settle(() => reject(new ExtractionError(message, { cause })));

    const timer = setTimeout(() => fail(`Extraction took longer than ${timeoutMs / 1000} s`), timeoutMs);
    if (signal?.aborted) return fail('Extraction cancelled');
    signal?.addEventListener('abort', () => fail('Extraction cancelled'), { once: true });
    worker.once('message', (outcome: ExtractionOutcome) =>
      outcome.ok ? settle(() => resolve(outcome.chunks)) : fail(outcome.message),
    );
    worker.once('error', (err) => fail('The file could not be read: the extractor crashed', err));
    // Only reached when the worker ends without posting an outcome.
    worker.once('exit', (code) => fail(`The file could not be read: the extractor stopped (exit code ${code})`));
  });
}
