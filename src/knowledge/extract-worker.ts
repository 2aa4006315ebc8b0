/**
 * Worker thread entry: extracts one file and posts the outcome back. Started by
 * extract-runner.ts, never imported (except for its types).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { KnowledgeExtension } from './detect.js';
import { ExtractionError, extractText } from './extract.js';

export interface ExtractionJob {
  filePath: string;
  ext: KnowledgeExtension;
}

export type ExtractionOutcome = { ok: true; text: string } | { ok: false; message: string };

async function run({ filePath, ext }: ExtractionJob): Promise<ExtractionOutcome> {
  try {
    return { ok: true, text: await extractText(filePath, ext) };
  } catch (err) {
    if (err instanceof ExtractionError) return { ok: false, message: err.message };
    // Not a bad file but a bug: keep the details for the server log, not for the uploader.
    console.error('Unexpected failure extracting knowledge file', err);
    return { ok: false, message: 'The file could not be read' };
  }
}

parentPort!.postMessage(await run(workerData as ExtractionJob));
