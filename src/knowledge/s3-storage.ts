import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3Location } from '../config.js';
import { isStorageFull, storageUnavailable } from '../errors.js';
import { MEDIA_TYPES, extensionOf } from './detect.js';
import { StoreStartError, TemporaryFiles, type ObjectStore, type ReceivedFile, type StoreDescription } from './object-store.js';

// Short, so that an unreachable store answers a request with 503 within seconds, never hangs it.
const CONNECTION_TIMEOUT_MS = 3000;
/** A connection that carries nothing for this long is given up (a store that accepts but never answers). */
export const SOCKET_IDLE_TIMEOUT_MS = 20_000;
const MAX_ATTEMPTS = 3;
/** S3's smallest part: an upload of up to 10 MiB goes in one request, or in 2-3 parts. */
const PART_SIZE = 5 * 1024 * 1024;
/** How long /ready trusts its last look at the store (concurrent probes share one request). */
const PROBE_TTL_MS = 1000;
/** A readiness probe must not hang on an unresponsive store. */
const PROBE_TIMEOUT_MS = 2000;

/**
 * The local folder for an S3 store's temporary files: under the system's temporary folder (never
 * DATA_DIR/storage), one per DATA_DIR, so a server clears at start only what its own crash left.
 */
export function temporaryFolderFor(dataDir: string): string {
  return path.join(os.tmpdir(), `blog-uploads-${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`);
}

export interface S3StorageOptions {
  /** Local folder for uploads received and stored files copied out for extraction. */
  tempDir: string;
}

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}
const statusOf = (error: unknown) => (error as SdkError | null)?.$metadata?.httpStatusCode;
/** No such object (a missing bucket is the store's failure, not the object's absence). */
const isMissingObject = (error: unknown) => statusOf(error) === 404 && (error as SdkError).name !== 'NoSuchBucket';
const oneLine = (error: unknown) => {
  const { name, code, message } = (error ?? {}) as SdkError;
  return (message && message !== 'UnknownError' ? message : (code ?? name ?? String(error))).replace(/\s+/g, ' ').trim();
};

/**
 * Files in an S3-compatible bucket, under `<prefix>/<storage key>`. Uploads are received into a
 * local temporary file (its type is sniffed and its size counted there) and then uploaded with
 * lib-storage (multipart past 5 MiB); the object appears only once complete. Extraction reads
 * a temporary copy, removed after. The store's failures are 503 STORAGE_UNAVAILABLE.
 */
export class S3Storage implements ObjectStore {
  readonly description: StoreDescription;
  private readonly client: S3Client;
  private readonly temporary: TemporaryFiles;
  private probe: { at: number; reachable: Promise<boolean> } | null = null;

  constructor(
    private readonly location: S3Location,
    options: S3StorageOptions,
  ) {
    const { bucket, prefix, endpoint, region, forcePathStyle, credentials } = location;
    this.description = { kind: 's3', bucket, prefix, endpoint, region };
    this.temporary = new TemporaryFiles(options.tempDir);
    this.client = new S3Client({
      region,
      endpoint: endpoint ?? undefined,
      forcePathStyle,
      credentials: credentials ?? undefined,
      // Stores without flexible checksums (most S3-compatible ones) refuse or mangle them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: MAX_ATTEMPTS,
      requestHandler: { connectionTimeout: CONNECTION_TIMEOUT_MS, socketTimeout: SOCKET_IDLE_TIMEOUT_MS },
    });
  }

  /** The object's key: the storage key after the prefix. */
  objectKey(storageKey: string): string {
    return this.location.prefix ? `${this.location.prefix}/${storageKey}` : storageKey;
  }

  async open(): Promise<void> {
    this.temporary.clear();
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.location.bucket }));
    } catch (error) {
      // The process ends on this error without closing: it leaves no empty folder behind.
      await fs.promises.rm(this.temporary.dir, { recursive: true, force: true });
      throw this.startError(error);
    }
  }

  receive(stream: Readable): Promise<ReceivedFile> {
    return this.temporary.receive(stream);
  }

  async commit(tmpPath: string, storageKey: string): Promise<void> {
    const extension = extensionOf(storageKey);
    const body = fs.createReadStream(tmpPath);
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.location.bucket,
        Key: this.objectKey(storageKey),
        Body: body,
        ContentType: extension ? MEDIA_TYPES[extension] : undefined,
      },
      partSize: PART_SIZE,
      queueSize: 2,
      // A failed multipart upload is aborted, so its parts do not linger in the bucket.
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      throw this.failure('the file was not saved', error);
    } finally {
      // A failed upload may stop reading part-way: its file descriptor is closed here, not leaked.
      body.destroy();
    }
    await this.temporary.discard(tmpPath);
  }

  discard(tmpPath: string): Promise<void> {
    return this.temporary.discard(tmpPath);
  }

  newTemporaryPath(): string {
    return this.temporary.newPath();
  }

  async read(storageKey: string): Promise<{ stream: Readable; size: number } | null> {
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: this.objectKey(storageKey) }));
      return { stream: object.Body as Readable, size: object.ContentLength ?? 0 };
    } catch (error) {
      if (isMissingObject(error)) return null;
      throw this.failure('the stored file could not be read', error);
    }
  }

  async withLocalFile<T>(storageKey: string, use: (filePath: string) => Promise<T>): Promise<T> {
    const localPath = await this.download(storageKey);
    try {
      return await use(localPath);
    } finally {
      await this.temporary.discard(localPath);
    }
  }

  /** The object, copied to a new temporary file (nothing left when the copy fails). */
  private async download(storageKey: string): Promise<string> {
    const Key = this.objectKey(storageKey);
    let body: Readable;
    try {
      body = (await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key }))).Body as Readable;
    } catch (error) {
      if (isMissingObject(error)) throw new Error(`The stored file ${Key} is missing from bucket ${this.location.bucket}`, { cause: error });
      throw this.failure('the stored file could not be read', error);
    }
    try {
      return (await this.temporary.receive(body)).tmpPath;
    } catch (error) {
      throw this.failure('the stored file could not be read', error);
    }
  }

  async exists(storageKey: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.location.bucket, Key: this.objectKey(storageKey) }));
      return true;
    } catch (error) {
      if (isMissingObject(error)) return false;
      throw this.failure('the stored file could not be looked up', error);
    }
  }

  async remove(storageKey: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: this.objectKey(storageKey) }));
    } catch (error) {
      throw this.failure('nothing was deleted', error);
    }
  }

  /** A HeadBucket at most once a second (concurrent callers share it), bounded in time. */
  reachable(): Promise<boolean> {
    const now = Date.now();
    if (!this.probe || now - this.probe.at >= PROBE_TTL_MS) {
      const reachable = this.client.send(new HeadBucketCommand({ Bucket: this.location.bucket }), { abortSignal: AbortSignal.timeout(PROBE_TIMEOUT_MS) }).then(
        () => true,
        () => false,
      );
      this.probe = { at: now, reachable };
    }
    return this.probe.reachable;
  }

  async close(): Promise<void> {
    this.client.destroy();
    await fs.promises.rm(this.temporary.dir, { recursive: true, force: true });
  }

  /** A full local disk stays what it is; anything else is the store's failure (and /ready looks again). */
  private failure(outcome: string, error: unknown): Error {
    if (isStorageFull(error)) return error as Error;
    this.probe = null;
    return storageUnavailable(outcome, error);
  }

  private startError(error: unknown): StoreStartError {
    const { bucket, endpoint, region } = this.location;
    const where = `bucket "${bucket}"${endpoint ? ` at ${endpoint}` : ''} (STORAGE_URL)`;
    const status = statusOf(error);
    const options = { cause: error };
    if (status === 404) return new StoreStartError(`Storage error: the ${where} does not exist: create it, or point STORAGE_URL at a bucket that exists`, options);
    if (status === 401 || status === 403) {
      return new StoreStartError(`Storage error: access to the ${where} was refused: check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`, options);
    }
    if (status === 301) return new StoreStartError(`Storage error: the ${where} is not in region ${region}: set region= in STORAGE_URL`, options);
    const answer = status ? `it answered ${status} ${oneLine(error)}` : oneLine(error);
    return new StoreStartError(`Storage error: cannot reach the ${where}: ${answer}`, { ...options, transient: true });
  }
}
