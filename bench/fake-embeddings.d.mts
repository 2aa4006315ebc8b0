// Types of fake-embeddings.mjs, for the TypeScript tests that use the same server.

export function fakeVector(text: string, model: string, dimensions: number): number[];

export interface FakeEmbeddings {
  url: string;
  /** Every /api/embed request, in order. */
  readonly calls: { model: string; input: string[] }[];
  /** Installed models; may be changed while the server runs. */
  models: string[];
  /** Embed requests after the next `skip` wait until the returned function is called. */
  hold(skip?: number): () => void;
  /** After the next `skip` embed requests, `n` answer `status` (500 by default). */
  failNext(n: number, status?: number, skip?: number): void;
  /** Stops listening (connections refused), dropping open connections. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export function startFakeEmbeddings(options?: { models?: string[]; dimensions?: number; port?: number; delayMs?: number }): Promise<FakeEmbeddings>;
