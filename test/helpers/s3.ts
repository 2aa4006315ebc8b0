import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** s3rver's own default credentials (it checks the signature, not who signed). */
export const S3_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };

export interface S3Fixture {
  bucket: string;
  prefix: string;
  endpoint: string;
  /** STORAGE_URL for the bucket and prefix. */
  url: string;
  /** STORAGE_URL and the credentials: the environment of an app on this store. */
  env: Record<string, string>;
  /** A client of its own, to look at the bucket behind the app's back. */
  client: S3Client;
  /** Every object key in the bucket. */
  keys(): Promise<string[]>;
  exists(key: string): Promise<boolean>;
  read(key: string): Promise<Buffer>;
  /** The store goes away (its port closes); `start()` brings it back on the same port with the same objects. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

/**
 * A real S3-compatible server (s3rver) on loopback, on a free port, with its objects in a
 * temporary folder and one bucket; stopped and removed when the test ends.
 */
export async function startS3(t: Teardown, options: { bucket?: string; prefix?: string } = {}): Promise<S3Fixture> {
  const bucket = options.bucket ?? 'blog';
  const prefix = options.prefix ?? 'blog';
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'blog-s3rver-'));
  let port = 0;
  let server: S3rver | null = null;
  const start = async () => {
    server = new S3rver({ port, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
    port = (await server.run()).port;
  };
  const stop = async () => {
    await server?.close();
    server = null;
  };
  await start();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: S3_CREDENTIALS.AWS_ACCESS_KEY_ID, secretAccessKey: S3_CREDENTIALS.AWS_SECRET_ACCESS_KEY },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  t.teardown(async () => {
    client.destroy();
    await stop();
    fs.rmSync(directory, { recursive: true, force: true });
  });
  const url = `s3://${bucket}${prefix ? `/${prefix}` : ''}?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1&forcePathStyle=true`;
  return {
    bucket,
    prefix,
    endpoint,
    url,
    env: { STORAGE_URL: url, ...S3_CREDENTIALS },
    client,
    async keys() {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
      return (listed.Contents ?? []).map((object) => object.Key!).sort();
    },
    async exists(key) {
      return client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
        () => true,
        (error: { $metadata?: { httpStatusCode?: number } }) => {
          if (error.$metadata?.httpStatusCode === 404) return false;
          throw error;
        },
      );
    },
    async read(key) {
      const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return Buffer.from(await object.Body!.transformToByteArray());
    },
    stop,
    start,
  };
}
