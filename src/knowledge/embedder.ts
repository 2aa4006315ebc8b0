import { Ollama, type Fetch } from 'ollama';
import { normalizeModelName } from '../ollama-models.js';

/**
 * Why embeddings cannot be made now: Ollama down, slow, or without the model. Not the job's
 * fault: an embedding job that meets it waits (`unavailable`: deferred with backoff, no attempt
 * spent) and search stays lexical meanwhile.
 */
export class EmbedderUnavailableError extends Error {
  readonly unavailable = true;
  constructor(
    message: string,
    readonly reason: 'unreachable' | 'model-missing' | 'failed',
  ) {
    super(message);
    this.name = 'EmbedderUnavailableError';
  }
}

export interface EmbedderOptions {
  host: string;
  model: string;
  /** Budget of one batch of a job (a cold model loads first). */
  batchTimeoutMs?: number;
  /** Budget of a search query's embedding: search falls back to lexical past it. */
  queryTimeoutMs?: number;
  /** Budget of the model list (readiness, the job's look before it starts). */
  listTimeoutMs?: number;
  /** How long the model list is trusted before it is asked again. */
  checkTtlMs?: number;
  now?: () => number;
}

export interface EmbedderStatus {
  /** Whether Ollama answered and has the model, as last seen. */
  available: boolean;
  reason?: EmbedderUnavailableError['reason'];
}

const DEFAULT_BATCH_TIMEOUT_MS = 120_000;
const DEFAULT_QUERY_TIMEOUT_MS = 2_000;
const DEFAULT_LIST_TIMEOUT_MS = 5_000;
const DEFAULT_CHECK_TTL_MS = 30_000;

/** The client's HTTP error (not exported by the package): carries the server's status code. */
function isResponseError(err: unknown): err is Error & { status_code: number; error: string } {
  return err instanceof Error && err.name === 'ResponseError' && typeof (err as { status_code?: unknown }).status_code === 'number';
}

/** A vector scaled to length 1: stored so, cosine similarity is a dot product on either database. */
export function unitVector(values: readonly number[]): Float32Array {
  let norm = 0;
  for (const v of values) norm += v * v;
  norm = Math.sqrt(norm);
  const out = new Float32Array(values.length);
  if (norm > 0) for (let i = 0; i < values.length; i++) out[i] = values[i]! / norm;
  return out;
}

/**
 * Embeddings through Ollama's `/api/embed` (the official client, given OLLAMA_HOST explicitly),
 * with the model OLLAMA_EMBED_MODEL names. Checked like the generation model: Ollama's model
 * list says whether the model is there, a 404 on embed that it went away.
 */
export class OllamaEmbedder {
  readonly model: string;
  private readonly host: string;
  private readonly batchTimeoutMs: number;
  private readonly queryTimeoutMs: number;
  private readonly listTimeoutMs: number;
  private readonly checkTtlMs: number;
  private readonly now: () => number;
  private probe: { at: number; result: Promise<EmbedderStatus> } | null = null;
  /** Whether the last look found Ollama serving the model (false until a look has). */
  private seenAvailable = false;
  private readonly availableListeners: (() => void)[] = [];

  constructor(options: EmbedderOptions) {
    this.host = options.host;
    this.model = options.model;
    this.batchTimeoutMs = options.batchTimeoutMs ?? DEFAULT_BATCH_TIMEOUT_MS;
    this.queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    this.listTimeoutMs = options.listTimeoutMs ?? DEFAULT_LIST_TIMEOUT_MS;
    this.checkTtlMs = options.checkTtlMs ?? DEFAULT_CHECK_TTL_MS;
    this.now = options.now ?? Date.now;
  }

  /** Whether Ollama serves the model, cached for a while; concurrent callers share one request. */
  status(fresh = false): Promise<EmbedderStatus> {
    const now = this.now();
    if (!fresh && this.probe && now - this.probe.at < this.checkTtlMs) return this.probe.result;
    const result = this.call(this.listTimeoutMs, undefined, async (client) => {
      const { models } = await client.list();
      const wanted = normalizeModelName(this.model);
      if (!models.some((m) => normalizeModelName(m.name) === wanted)) {
        throw new EmbedderUnavailableError(`Ollama does not have the embedding model ${this.model} (ollama pull ${this.model})`, 'model-missing');
      }
    }).then(
      (): EmbedderStatus => {
        const cameUp = !this.seenAvailable;
        this.seenAvailable = true;
        if (cameUp) for (const listener of this.availableListeners) listener();
        return { available: true };
      },
      (error: unknown): EmbedderStatus => {
        this.seenAvailable = false;
        return { available: false, reason: error instanceof EmbedderUnavailableError ? error.reason : 'failed' };
      },
    );
    this.probe = { at: now, result };
    return result;
  }

  /** As last seen (no request): whether Ollama serves the model. */
  get lastSeenAvailable(): boolean {
    return this.seenAvailable;
  }

  /** Calls `listener` each time a look finds the model served after it was not (or before any look). */
  onAvailable(listener: () => void): void {
    this.availableListeners.push(listener);
  }

  /** Throws EmbedderUnavailableError unless Ollama answers now and has the model. */
  async require(): Promise<void> {
    const status = await this.status(true);
    if (!status.available) {
      throw new EmbedderUnavailableError(
        status.reason === 'model-missing' ? `Ollama does not have the embedding model ${this.model} (ollama pull ${this.model})` : `Ollama cannot embed now (${status.reason})`,
        status.reason ?? 'failed',
      );
    }
  }

  /** Vectors of chunk texts, in order, scaled to length 1 (one `/api/embed` call). */
  embedBatch(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    return this.embed(texts, this.batchTimeoutMs, signal);
  }

  /** The vector of a search query, within the short query budget. */
  async embedQuery(text: string, signal?: AbortSignal): Promise<Float32Array> {
    const [vector] = await this.embed([text], this.queryTimeoutMs, signal);
    return vector!;
  }

  private async embed(texts: readonly string[], timeoutMs: number, signal?: AbortSignal): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    return this.call(timeoutMs, signal, async (client) => {
      // truncate: a chunk longer than the model's context is cut, not refused.
      const { embeddings } = await client.embed({ model: this.model, input: [...texts], truncate: true });
      if (!Array.isArray(embeddings) || embeddings.length !== texts.length || embeddings.some((e) => !Array.isArray(e) || e.length === 0)) {
        throw new EmbedderUnavailableError(`Ollama answered ${embeddings?.length ?? 0} embeddings for ${texts.length} inputs`, 'failed');
      }
      return embeddings.map(unitVector);
    });
  }

  /** Runs `work` with a client stopped at the deadline or by `signal`; failures become EmbedderUnavailableError. */
  private async call<T>(timeoutMs: number, signal: AbortSignal | undefined, work: (client: Ollama) => Promise<T>): Promise<T> {
    signal?.throwIfAborted();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const cancel = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', cancel, { once: true });
    const fetchWithSignal: Fetch = (input, init) => fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, controller.signal]) : controller.signal });
    try {
      return await work(new Ollama({ host: this.host, fetch: fetchWithSignal }));
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof EmbedderUnavailableError) throw error;
      if (controller.signal.aborted) throw new EmbedderUnavailableError(`Ollama did not answer within ${timeoutMs} ms`, 'unreachable');
      if (isResponseError(error)) {
        if (error.status_code === 404) throw new EmbedderUnavailableError(`Ollama does not have the embedding model ${this.model} (ollama pull ${this.model})`, 'model-missing');
        // A server error may pass; a refused request (400: an input it cannot take) will not,
        // so it spends the job's attempts rather than waiting for ever.
        if (error.status_code >= 500) throw new EmbedderUnavailableError(`Ollama answered ${error.status_code}: ${error.error}`, 'failed');
        throw new Error(`Ollama refused the embedding request (${error.status_code}): ${error.error}`, { cause: error });
      }
      // undici reports refused connections and resets as TypeErrors.
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      throw new EmbedderUnavailableError(`Ollama cannot be reached${cause ? ` (${cause})` : ''}`, 'unreachable');
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', cancel);
      controller.abort();
    }
  }
}
