import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };
/** The error envelope every failure answers with; switch on `error.code`. */
export type ErrorEnvelope = components['schemas']['ErrorEnvelope'];
export type ErrorCode = ErrorEnvelope['error']['code'];

export interface BlogClientOptions {
  /** Where the service is, e.g. `http://localhost:3000`. */
  baseUrl: string;
  /** A site's API key; the public content API needs none. */
  apiKey?: string;
  fetch?: typeof globalThis.fetch;
}

/** A file to upload: its bytes, or the path of a file to read (Node). */
export type UploadSource = Blob | Uint8Array | string;

export interface BlogClient extends Client<paths> {
  /** Uploads one file to the site's knowledge base (multipart, one part named `file`). */
  uploadKnowledge(file: UploadSource, fileName?: string): ReturnType<Client<paths>['POST']>;
}

async function toBlob(file: UploadSource): Promise<{ blob: Blob; name: string | undefined }> {
  if (typeof file === 'string') {
    // Loaded only for paths, so the client runs in browsers too.
    const [{ readFile }, { basename }] = await Promise.all([import('node:fs/promises'), import('node:path')]);
    return { blob: new Blob([await readFile(file)]), name: basename(file) };
  }
  return { blob: file instanceof Blob ? file : new Blob([new Uint8Array(file)]), name: undefined };
}

/**
 * A typed client of the service, generated from its OpenAPI document: every call answers
 * `{ data, error, response }` with the declared types, and a 4xx is an `error`, never a throw.
 *
 *   const blog = createBlogClient({ baseUrl: 'http://localhost:3000', apiKey });
 *   const { data, error } = await blog.POST('/api/v1/posts', { body: { title: 'Hello' } });
 */
export function createBlogClient(options: BlogClientOptions): BlogClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    fetch: options.fetch,
    headers: options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {},
  });
  return Object.assign(client, {
    async uploadKnowledge(file: UploadSource, fileName?: string) {
      const { blob, name } = await toBlob(file);
      const uploadName = fileName ?? name ?? 'upload.txt';
      return client.POST('/api/v1/knowledge', {
        body: { file: blob },
        bodySerializer(body) {
          const form = new FormData();
          form.append('file', body.file, uploadName);
          return form;
        },
      });
    },
  });
}
