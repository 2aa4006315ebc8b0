import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { WEBHOOK_MAX_RESPONSE_BYTES, WEBHOOK_RESPONSE_EXCERPT_CHARS } from '../limits.js';
import { ForbiddenAddressError, guardedLookup, literalAddressProblem } from './address.js';

/**
 * What one attempt came to: `succeeded` (2xx), `retry` (a timeout, a connection error, 5xx,
 * 408, 409 or 429, with the receiver's Retry-After when it gave one) or `failed` (any other
 * answer, a redirect, a refused address: retrying cannot help).
 */
export interface AttemptResult {
  verdict: 'succeeded' | 'retry' | 'failed';
  /** The receiver's HTTP status; null when there was no answer. */
  status: number | null;
  /** The start of the receiver's answer (at most WEBHOOK_RESPONSE_EXCERPT_CHARS characters). */
  body: string | null;
  error: string | null;
  retryAfterMs: number | null;
  durationMs: number;
}

export interface SendOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  signal?: AbortSignal;
}

export const USER_AGENT = 'blog-service-webhooks/1.0 (Standard Webhooks)';

// Connections to receivers are kept alive between deliveries (free sockets do not keep the process up).
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 60_000 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64, timeout: 60_000 }),
};

/** Retry-After in seconds or as an HTTP date, as milliseconds from now; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  if (/^\s*\d+\s*$/.test(text)) return Number(text.trim()) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** 2xx delivers; timeouts and 408, 409, 429 and 5xx are worth retrying; other answers are not. */
export function verdictFor(status: number): AttemptResult['verdict'] {
  if (status >= 200 && status < 300) return 'succeeded';
  if (status === 408 || status === 409 || status === 429 || status >= 500) return 'retry';
  return 'failed';
}

const describeError = (error: NodeJS.ErrnoException) => (error.code && !error.message.includes(error.code) ? `${error.code}: ${error.message}` : error.message);

/**
 * POSTs one signed body to a receiver: no redirects followed, at most 64 KB of the answer
 * read, everything within `timeoutMs`, and (unless allowPrivate) only to public addresses,
 * checked on the address actually connected to. Never throws: the outcome says what happened.
 */
export function sendWebhook(rawUrl: string, headers: Record<string, string>, body: string, options: SendOptions): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const failure = (verdict: 'retry' | 'failed', error: string): AttemptResult => ({ verdict, status: null, body: null, error, retryAfterMs: null, durationMs: elapsed() });

  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return Promise.resolve(failure('failed', `Not a valid URL: ${rawUrl}`));
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.resolve(failure('failed', `Only http and https URLs are called, not ${url.protocol}`));
  // Port 0 is no port: connecting to it reaches whatever the system picks, never a receiver.
  if (url.port === '0') return Promise.resolve(failure('failed', 'Port 0 is not a port a receiver listens on'));
  if (!options.allowPrivate) {
    const refused = literalAddressProblem(url);
    if (refused) return Promise.resolve(failure('failed', refused.message));
  }
  if (options.signal?.aborted) return Promise.resolve(failure('retry', 'Interrupted: the service is stopping'));

  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const payload = Buffer.from(body, 'utf8');
    const request = (url.protocol === 'https:' ? https : http).request(
      url,
      {
        method: 'POST',
        agent: agents[url.protocol as 'http:' | 'https:'],
        lookup: options.allowPrivate ? undefined : (guardedLookup as never),
        headers: { 'content-type': 'application/json', 'content-length': String(payload.length), 'user-agent': USER_AGENT, ...headers },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        const done = (error?: string) => {
          const text = Buffer.concat(chunks).toString('utf8').slice(0, WEBHOOK_RESPONSE_EXCERPT_CHARS);
          let verdict = verdictFor(status);
          let message = error ?? null;
          if (status >= 300 && status < 400) {
            verdict = 'failed';
            message = `Redirects are not followed (HTTP ${status}${response.headers.location ? ` to ${response.headers.location}` : ''}): give the final URL`;
          } else if (verdict !== 'succeeded') {
            message ??= `HTTP ${status}`;
          }
          finish({ verdict, status, body: text || null, error: message, retryAfterMs: verdict === 'retry' ? parseRetryAfter(response.headers['retry-after']) : null, durationMs: elapsed() });
        };
        response.on('data', (chunk: Buffer) => {
          if (size >= WEBHOOK_MAX_RESPONSE_BYTES) return;
          const part = chunk.subarray(0, WEBHOOK_MAX_RESPONSE_BYTES - size);
          chunks.push(part);
          size += part.length;
          // Enough read: the rest of a large answer is dropped with its connection.
          if (size >= WEBHOOK_MAX_RESPONSE_BYTES) {
            done();
            response.destroy();
          }
        });
        response.on('end', () => done());
        response.on('error', () => done());
        response.on('close', () => done());
      },
    );
    const timer = setTimeout(
      () => request.destroy(Object.assign(new Error(`No complete answer within ${options.timeoutMs} ms`), { code: 'ETIMEDOUT' })),
      options.timeoutMs,
    );
    const onAbort = () => request.destroy(Object.assign(new Error('Interrupted: the service is stopping'), { code: 'EABORTED' }));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    request.on('error', (error: NodeJS.ErrnoException) => {
      // A refused address cannot be fixed by retrying; a timeout or a connection error may be.
      if (error instanceof ForbiddenAddressError) finish(failure('failed', error.message));
      else finish(failure('retry', describeError(error)));
    });
    request.end(payload);
  });
}
