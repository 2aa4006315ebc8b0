import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

// What every object store shares (local disk in storage.ts, S3 in s3-storage.ts): its
// interface, its start-up error and its temporary files. A module of its own, so that the S3
// store, loaded only when configured, does not import the module that loads it.

/** A stored file's store as /ready and the start-up log tell it: never a secret. */
export type StoreDescription =
  | { kind: 'local'; path: string }
  | { kind: 's3'; bucket: string; prefix: string; endpoint: string | null; region: string };

/**
 * The store cannot be used at start-up (a bucket missing, refused or unreachable): one line for
 * the operator. `transient`: it could not be reached or answered a server error, which may pass
 * (a start waits for it); a missing bucket or refused credentials will not.
 */
export class StoreStartError extends Error {
  readonly transient: boolean;
  constructor(message: string, options?: ErrorOptions & { transient?: boolean }) {
    super(message, options);
    this.name = 'StoreStartError';
    this.transient = options?.transient ?? false;
  }
}

/** An upload streamed to a local temporary file, not yet stored. */
export interface ReceivedFile {
  tmpPath: string;
  size: number;
}

/**
 * Where knowledge files are kept, keyed by their storage key. An upload is received into a
 * local temporary file first (its type is sniffed and its size counted there), then committed
 * to its key: a stored file is always whole or absent. Local disk is the first implementation,
 * an S3-compatible bucket the second.
 */
export interface ObjectStore {
  readonly description: StoreDescription;
  /** At start-up: clears temporary files a crash left, and checks the store can be used. */
  open(): Promise<void>;
  /** Streams an upload to a local temporary file, counting its bytes; the caller commits or discards it. */
  receive(stream: Readable): Promise<ReceivedFile>;
  /** Writes a received file to its key, whole or not at all; the temporary file is gone once this succeeds. */
  commit(tmpPath: string, storageKey: string): Promise<void>;
  /** Removes a temporary file (one already gone is fine). */
  discard(tmpPath: string): Promise<void>;
  /** A new path among the temporary files, for a file made here (a processed image) to be committed. */
  newTemporaryPath(): string;
  /** The stored file's bytes as a stream, with their count; null when there is no such file. */
  read(storageKey: string): Promise<{ stream: Readable; size: number } | null>;
  /** Calls `use` with a local path holding the stored file's bytes; a copy made for it is removed after. */
  withLocalFile<T>(storageKey: string, use: (filePath: string) => Promise<T>): Promise<T>;
  exists(storageKey: string): Promise<boolean>;
  /** Removes a stored file; one already gone is fine. */
  remove(storageKey: string): Promise<void>;
  /** Whether the store answers now (/ready). */
  reachable(): Promise<boolean>;
  close(): Promise<void>;
}

/** A folder of temporary files: uploads received, stored files copied out for extraction. */
export class TemporaryFiles {
  constructor(readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
  }

  /** A new path in the folder, for a file to be created there. */
  newPath(): string {
    return path.join(this.dir, randomUUID());
  }

  /** Streams `stream` to a new temporary file, counting its bytes; nothing is left if it fails. */
  async receive(stream: Readable): Promise<ReceivedFile> {
    const tmpPath = this.newPath();
    let size = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        done(null, chunk);
      },
    });
    // The file is created before the pipeline starts: a write stream opening it itself may do so
    // after a failed pipeline has already settled (its open waiting in a busy thread pool), and the
    // file would appear after it was discarded. The stream closes the handle, failed or not.
    // While the file opens nothing listens to the stream yet: an error it emits then must not be
    // an uncaught one. The pipeline still sees it, as the stream's own `errored`.
    const heldUntilPiped = () => {};
    stream.on('error', heldUntilPiped);
    try {
      let handle: fs.promises.FileHandle;
      try {
        handle = await fs.promises.open(tmpPath, 'wx');
      } catch (error) {
        stream.destroy(); // as a failed pipeline would: its sender is not left waiting
        throw error;
      }
      try {
        await pipeline(stream, counter, handle.createWriteStream());
      } catch (error) {
        await this.discard(tmpPath);
        throw error;
      }
    } finally {
      stream.off('error', heldUntilPiped);
    }
    return { tmpPath, size };
  }

  async discard(tmpPath: string): Promise<void> {
    await fs.promises.rm(tmpPath, { force: true });
  }

  /** Temporary files outlive only a crash; nothing else can own them at start-up (one server per DATA_DIR). */
  clear(): void {
    fs.mkdirSync(this.dir, { recursive: true });
    for (const name of fs.readdirSync(this.dir)) fs.rmSync(path.join(this.dir, name), { force: true });
  }
}
