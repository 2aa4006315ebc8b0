import type { Readable } from 'node:stream';
import { validationError } from './errors.js';

/** One part of a multipart upload, as the HTTP layer parsed it. */
export interface UploadPart {
  type: 'file' | 'field';
  fieldname: string;
  filename?: string;
  /** The file's bytes; `truncated` once more than the size limit arrived. */
  file?: Readable & { truncated?: boolean };
}

/** How an upload's one file is taken: each step may refuse it by throwing. */
export interface OneFileSteps<T> {
  /** What the file is to a person ("file", "image"), for the 400s. */
  noun: string;
  /** Before a byte is read (a site already at its quota is refused here). */
  admit(): Promise<void>;
  /** Receives the part's bytes into a temporary file (and checks them); leaves nothing when it throws. */
  receive(part: UploadPart & { file: Readable & { truncated?: boolean } }): Promise<T>;
  /** After the whole file is in (its size against the quota). */
  check(received: T): Promise<void>;
  /** Removes what `receive` made, when a later step refuses it. */
  discard(received: T): Promise<void>;
}

/**
 * The one file part, named "file", of a multipart upload (knowledge files and images alike):
 * any other file part, or none, is a 400, and a refused part is drained so the request ends.
 */
export async function receiveOneFile<T>(parts: AsyncIterable<UploadPart>, steps: OneFileSteps<T>): Promise<T> {
  const onePart = () =>
    validationError(`Send exactly one ${steps.noun}, in the part named "file"`, [{ path: '/body/file', message: 'exactly one file part named "file"' }]);
  let received: T | undefined;
  try {
    for await (const part of parts) {
      if (part.type !== 'file') continue;
      if (part.fieldname !== 'file' || received !== undefined || !part.file) {
        part.file?.resume();
        throw onePart();
      }
      try {
        await steps.admit();
      } catch (error) {
        part.file.resume();
        throw error;
      }
      received = await steps.receive(part as UploadPart & { file: Readable });
      await steps.check(received);
    }
    if (received === undefined) {
      throw validationError(`No ${steps.noun}: send multipart/form-data with one part named "file"`, [{ path: '/body/file', message: 'is required' }]);
    }
    return received;
  } catch (error) {
    if (received !== undefined) await steps.discard(received);
    throw error;
  }
}
