import { Ollama, type Fetch } from 'ollama';
import { AppError } from '../errors.js';
import { GenerationTimeoutError, GeneratorUnavailableError, InvalidModelOutputError } from './errors.js';
import { buildMessages, parseGeneratedPost, POST_JSON_SCHEMA, type ChatMessage } from './prompt.js';
import type { GenerationRequest, GenerationResult, Generator } from './types.js';

export interface OllamaGeneratorOptions {
  host: string;
  model: string;
  /** Budget for one generate() call, the retry included. */
  timeoutMs: number;
  /** Budget for listing models: a readiness probe must not hang on an unresponsive host. */
  listTimeoutMs?: number;
}

const DEFAULT_LIST_TIMEOUT_MS = 5000;
/** One retry when the model's answer is not a valid post. */
const MAX_ATTEMPTS = 2;
/** Ollama's default context (2-4k tokens) would silently truncate eight passages plus the answer. */
const CONTEXT_TOKENS = 8192;

interface CallOptions {
  /** Named in the errors. */
  model: string;
  timeoutMs: number;
  onTimeout: () => AppError;
  signal?: AbortSignal;
}

/** Hands every request of one call the call's signal (the client's list() passes none of its own). */
function fetchWithSignal(signal: AbortSignal): Fetch {
  return (input, init) =>
    fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal });
}

/** The client's HTTP error (not exported by the package): carries the server's status code. */
function isResponseError(err: unknown): err is Error & { status_code: number; error: string } {
  return err instanceof Error && err.name === 'ResponseError' && typeof (err as { status_code?: unknown }).status_code === 'number';
}

/** "fetch failed (ECONNREFUSED)": undici hides the useful part in the cause. */
function describeNetworkError(err: Error): string {
  const cause = err.cause as { code?: string; message?: string } | undefined;
  const detail = cause?.code ?? cause?.message;
  return detail ? `${err.message}: ${detail}` : err.message;
}

export class OllamaGenerator implements Generator {
  readonly provider = 'ollama' as const;
  readonly model: string;
  private readonly host: string;
  private readonly timeoutMs: number;
  private readonly listTimeoutMs: number;

  constructor(options: OllamaGeneratorOptions) {
    this.host = options.host;
    this.model = options.model;
    this.timeoutMs = options.timeoutMs;
    this.listTimeoutMs = options.listTimeoutMs ?? DEFAULT_LIST_TIMEOUT_MS;
  }

  /** Names of the installed models ("llama3.2:latest"); throws GeneratorUnavailableError. */
  async listModels(): Promise<string[]> {
    const onTimeout = () => GeneratorUnavailableError.unreachable(this.host, `no answer within ${this.listTimeoutMs} ms`);
    return this.withClient({ model: this.model, timeoutMs: this.listTimeoutMs, onTimeout }, async (client) => {
      const { models } = await client.list();
      return models.map((m) => m.name);
    });
  }

  async generate(req: GenerationRequest, signal?: AbortSignal): Promise<GenerationResult> {
    const model = req.model || this.model;
    const messages = buildMessages(req);
    const onTimeout = () => new GenerationTimeoutError(this.timeoutMs);
    return this.withClient({ model, timeoutMs: this.timeoutMs, onTimeout, signal }, async (client) => {
      for (let attempt = 1; ; attempt++) {
        const raw = await this.chat(client, model, messages);
        try {
          return { post: parseGeneratedPost(raw), provider: this.provider, model };
        } catch (err) {
          if (!(err instanceof InvalidModelOutputError)) throw err;
          if (attempt === MAX_ATTEMPTS) throw new InvalidModelOutputError(`${err.reason} (${MAX_ATTEMPTS} attempts)`);
        }
      }
    });
  }

  /** Streams, because undici cuts a non-streamed answer off at its 300 s header timeout. */
  private async chat(client: Ollama, model: string, messages: ChatMessage[]): Promise<string> {
    const stream = await client.chat({
      model,
      messages,
      stream: true,
      format: POST_JSON_SCHEMA,
      options: { num_ctx: CONTEXT_TOKENS },
    });
    let content = '';
    for await (const part of stream) content += part.message?.content ?? '';
    return content;
  }

  /**
   * Runs `work` with a client whose requests all stop at the deadline or when `signal` aborts,
   * and turns the client's failures into the generator errors.
   */
  private async withClient<T>(call: CallOptions, work: (client: Ollama) => Promise<T>): Promise<T> {
    const { model, timeoutMs, onTimeout, signal } = call;
    signal?.throwIfAborted();
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const cancel = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      return await work(new Ollama({ host: this.host, fetch: fetchWithSignal(controller.signal) }));
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (timedOut) throw onTimeout();
      throw this.translate(err, model);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', cancel);
      // Closes a response left half-read, e.g. a stream abandoned after an error.
      controller.abort();
    }
  }

  private translate(err: unknown, model: string): Error {
    if (err instanceof AppError) return err;
    if (isResponseError(err)) {
      if (err.status_code === 404) return GeneratorUnavailableError.modelMissing(model, this.host);
      return new GeneratorUnavailableError(`The Ollama server at ${this.host} answered ${err.status_code}: ${err.error}`);
    }
    // undici reports refused connections, resets and cut-off streams as TypeErrors.
    if (err instanceof TypeError) return GeneratorUnavailableError.unreachable(this.host, describeNetworkError(err));
    const message = err instanceof Error ? err.message : String(err);
    return new GeneratorUnavailableError(`The Ollama server at ${this.host} failed: ${message}`);
  }
}
