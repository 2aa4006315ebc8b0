import type { IdempotencyKeyRow } from '../db/schema.js';

/** A stored answer, replayed to retries. */
export interface StoredResponse {
  status: number;
  contentType: string | null;
  body: string;
}

/**
 * What to do with a request carrying an Idempotency-Key:
 * - `run`: the first: run it, then `complete` (keep its answer) or `release` (forget it);
 * - `replay`: answered before with the same request: send the stored answer;
 * - `compare`: answered before, but the request's fingerprint is not known yet (an upload,
 *   hashed as it is read): compare, then replay or refuse;
 * - `mismatch`: the key was used for another request (422);
 * - `in-use`: the first request is still running (409).
 */
export type Begin =
  | { action: 'run' }
  | { action: 'replay'; response: StoredResponse }
  | { action: 'compare'; fingerprint: string; response: StoredResponse }
  | { action: 'mismatch' }
  | { action: 'in-use' };

/** The fields of a kept answer that a retry is told about (both databases store the same row). */
type AnsweredRow = Pick<IdempotencyKeyRow, 'fingerprint' | 'responseStatus' | 'responseType' | 'responseBody'>;

export const storedResponse = (row: AnsweredRow): StoredResponse => ({ status: row.responseStatus, contentType: row.responseType, body: row.responseBody });

/** A request whose key already has a live answer; `fingerprint` null: not known yet (an upload). */
export function decideAnswered(row: AnsweredRow, fingerprint: string | null): Begin {
  if (fingerprint === null) return { action: 'compare', fingerprint: row.fingerprint, response: storedResponse(row) };
  return row.fingerprint === fingerprint ? { action: 'replay', response: storedResponse(row) } : { action: 'mismatch' };
}

/**
 * A request whose key's first request still runs: refused as another request when both
 * fingerprints are known and differ, else told to wait.
 */
export function decideRunning(runningFingerprint: string | null, fingerprint: string | null): Begin {
  return fingerprint !== null && runningFingerprint !== null && runningFingerprint !== fingerprint ? { action: 'mismatch' } : { action: 'in-use' };
}
