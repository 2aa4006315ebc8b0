/**
 * Extractor process entry: receives one job, extracts the file, chunks its text and sends the
 * chunks back. Forked by extract-runner.ts, never imported (except for its types).
 */
import type { KnowledgeExtension } from './detect.js';
import { ExtractionError, extractChunks } from './extract.js';

export interface ExtractionJob {
  filePath: string;
  ext: KnowledgeExtension;
  /** Leads every chunk (chunking 10 MB of text takes a while, so it happens here too). */
  fileName: string;
}

export type ExtractionOutcome = { ok: true; chunks: string[] } | { ok: false; message: string };

async function run({ filePath, ext, fileName }: ExtractionJob): Promise<ExtractionOutcome> {
  try {
    return { ok: true, chunks: await extractChunks(filePath, ext, fileName) };
  } catch (err) {
    if (err instanceof ExtractionError) return { ok: false, message: err.message };
    // Not a bad file but a bug: keep the details for the server log, not for the uploader.
    console.error('Unexpected failure extracting knowledge file', err);
    return { ok: false, message: 'The file could not be read' };
  }
}

process.once('message', async (job: ExtractionJob) => {
  const outcome = await run(job);
  // Disconnecting once the outcome is sent lets the process end on its own.
  process.send!(outcome, () => process.disconnect());
});
