import type { KnowledgeExtension } from './detect.js';

/* What the server and its extractor process (extract-runner.ts, extract-worker.ts) say to each other. */

/**
 * Extraction failed for a reason the uploader can act on; the message is shown to them. Here,
 * not beside the parsers (extract.ts), so the server knows it without loading them (170 ms).
 */
export class ExtractionError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ExtractionError';
  }
}

export interface ExtractionJob {
  filePath: string;
  ext: KnowledgeExtension;
  /** Leads every chunk (chunking 10 MB of text takes a while, so it happens here too). */
  fileName: string;
  /** Most text taken from the file, in UTF-8 bytes. */
  maxTextBytes?: number;
  /** The extractor ends itself this long after receiving the job, whatever its parent does (default: EXTRACTOR_DEADLINE_MS from its start). */
  deadlineMs?: number;
}

export type ExtractionOutcome = ({ ok: true; chunks: string[] } | { ok: false; message: string }) & {
  /** The extractor's peak resident memory, in MB (for logs and measurements). */
  peakMemoryMb?: number;
};

/** What the parent tells its extractor through the environment, read before anything slow. */
export const PARENT_PID_ENV = 'EXTRACTOR_PARENT_PID';
export const DEADLINE_ENV = 'EXTRACTOR_DEADLINE_MS';
