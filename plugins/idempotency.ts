import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler, onSendHookHandler, preHandlerHookHandler, preValidationHookHandler, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, validationError } from '../src/errors.js';
import { MultipartFingerprint, jsonFingerprint, multipartBoundary } from '../src/idempotency/fingerprint.js';
import type { Begin, StoredResponse } from '../src/idempotency/store.js';
import { MAX_FILE_BYTES, MAX_IDEMPOTENCY_KEY_LENGTH } from '../src/limits.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route honours an Idempotency-Key header (a POST that creates something). */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    idempotency: IdempotencyState | null;
  }
}

interface IdempotencyState {
  siteId: string;
  key: string;
  /** Known at once for a JSON body; an upload's is hashed as the handler reads it. */
  fingerprint: string | null;
  upload: MultipartFingerprint | null;
  /** The handler started: only then is its answer worth keeping. */
  ran: boolean;
  settled: boolean;
}

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';

// 1-255 printable ASCII characters, not only spaces.
const VALID_KEY = new RegExp(`^(?=.*[\\x21-\\x7e])[\\x20-\\x7e]{1,${MAX_IDEMPOTENCY_KEY_LENGTH}}$`);
// An upload compared with a stored one is read to its end, but no further than this.
const MAX_COMPARED_BODY = MAX_FILE_BYTES + 1024 * 1024;
const PURGE_INTERVAL_MS = 3_600_000;

const keyReused = () =>
  new AppError(
    422,
    'IDEMPOTENCY_KEY_REUSED',
    'This Idempotency-Key was used for a different request (another route or body) within the last 24 hours: use a new key for a new request',
  );
const keyInUse = () =>
  new AppError(409, 'IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still running: retry once it has answered');

const toArray = <T>(hooks: T | T[] | undefined): T[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]);

const isUpload = (request: FastifyRequest) => /^multipart\//i.test(request.headers['content-type'] ?? '');

/** Hashes the upload as the route's multipart parser reads it (the stream stays paused until it does). */
function teeUpload(raw: IncomingMessage, fingerprint: MultipartFingerprint): void {
  raw.pause();
  raw.on('data', (chunk: Buffer) => fingerprint.update(chunk));
  raw.once('end', () => fingerprint.end());
}

/** Reads a whole upload only to hash it (a retry of a request already answered); null when cut short or too large. */
function hashWholeUpload(raw: IncomingMessage, fingerprint: MultipartFingerprint): Promise<string | null> {
  return new Promise((resolve) => {
    raw.on('data', (chunk: Buffer) => {
      fingerprint.update(chunk);
      if (fingerprint.bytes > MAX_COMPARED_BODY) {
        raw.pause();
        resolve(null);
      }
    });
    raw.once('end', () => resolve(fingerprint.end()));
    raw.once('error', () => resolve(null));
    raw.once('close', () => resolve(fingerprint.digest));
    raw.resume();
  });
}

/** The upload's fingerprint once its last byte went past (waiting briefly for the stream's end). */
async function uploadDigest(raw: IncomingMessage, fingerprint: MultipartFingerprint): Promise<string | null> {
  if (fingerprint.digest !== null) return fingerprint.digest;
  if (raw.readableEnded) return fingerprint.end();
  if (raw.destroyed) return null;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fingerprint.digest), 2000);
    raw.once('end', () => {
      clearTimeout(timer);
      resolve(fingerprint.end());
    });
  });
}

function replay(reply: FastifyReply, response: StoredResponse): FastifyReply {
  reply.code(response.status).header(REPLAYED_HEADER, 'true');
  if (response.contentType) reply.type(response.contentType);
  return reply.send(response.body);
}

/**
 * Idempotency-Key on the routes that ask for it (`config: { idempotent: true }`): the first
 * request's status and body are kept per site and key for 24 hours; a retry of the same
 * request gets them again with `Idempotent-Replayed: true` and runs nothing; the same key
 * for another request is 422 IDEMPOTENCY_KEY_REUSED, and while the first still runs 409
 * IDEMPOTENCY_KEY_IN_USE. Answers of requests that never reached their handler (validation)
 * or failed on the server's side (5xx) are not kept: a retry runs anew.
 */
export default fp(
  async function idempotencyPlugin(app: FastifyInstance) {
    const store = app.stores.idempotency;
    /** Frees a key; a failure only delays it (the key's lease runs out). */
    const release = (siteId: string, key: string) =>
      store.release(siteId, key).catch((error: unknown) => app.log.warn({ err: error }, 'could not free an idempotency key'));
    app.decorateRequest('idempotency', null);

    /** What to do with a request: nothing without a key, else once its key was looked up. */
    const decide = (request: FastifyRequest, reply: FastifyReply): undefined | Promise<FastifyReply | undefined> => {
      const header = request.headers[IDEMPOTENCY_HEADER];
      if (header === undefined) return;
      if (typeof header !== 'string' || !VALID_KEY.test(header)) {
        const message = `must be 1-${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters, sent once`;
        throw validationError(`Idempotency-Key ${message}`, [{ path: '/headers/idempotency-key', message }]);
      }
      const siteId = request.site.id;
      const route = `${request.method} ${request.routeOptions.url}`;
      const upload = isUpload(request) ? new MultipartFingerprint(route, multipartBoundary(request.headers['content-type'])) : null;
      const fingerprint = upload ? null : jsonFingerprint(route, request.body);
      const act = (decision: Begin): FastifyReply | undefined | Promise<FastifyReply | undefined> => {
        switch (decision.action) {
          case 'run':
            request.idempotency = { siteId, key: header, fingerprint, upload, ran: false, settled: false };
            if (upload) teeUpload(request.raw, upload);
            return undefined;
          case 'replay':
            return replay(reply, decision.response);
          case 'compare':
            return hashWholeUpload(request.raw, upload!).then((received) => {
              if (received === null || received !== decision.fingerprint) throw keyReused();
              return replay(reply, decision.response);
            });
          case 'mismatch':
            throw keyReused();
          case 'in-use':
            reply.header('retry-after', '1');
            throw keyInUse();
        }
      };
      return store.begin(siteId, header, fingerprint, Date.now()).then(act);
    };

    // Callback hooks: requests without a key never wait on a promise.
    const begin: preValidationHookHandler = function (request, reply, done) {
      let outcome: ReturnType<typeof decide>;
      try {
        outcome = decide(request, reply);
      } catch (error) {
        return done(error as Error);
      }
      if (outcome === undefined) return done();
      // A replay was sent (a reply is returned): the request ends there, without done().
      outcome.then((sent) => sent === undefined && done(), (error: Error) => done(error));
    };

    const ran: preHandlerHookHandler = function (request, _reply, done) {
      if (request.idempotency) request.idempotency.ran = true;
      done();
    };

    /** Keeps the answer (or frees the key when it is not worth keeping); never rejects. */
    const settle = async (request: FastifyRequest, reply: FastifyReply, payload: unknown, fingerprint: string | null): Promise<void> => {
      const state = request.idempotency!;
      try {
        const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
        if (!state.ran || reply.statusCode >= 500 || body === null || fingerprint === null) {
          await release(state.siteId, state.key);
        } else {
          const type = reply.getHeader('content-type');
          // Kept before the answer leaves: a retry sent as soon as it arrives finds it.
          await store.complete(state.siteId, state.key, fingerprint, { status: reply.statusCode, contentType: typeof type === 'string' ? type : null, body });
        }
      } catch (error) {
        request.log.warn({ err: error }, 'could not keep the answer of an idempotent request');
        await release(state.siteId, state.key);
      }
    };

    const keep: onSendHookHandler = function (request, reply, payload, done) {
      const state = request.idempotency;
      if (!state || state.settled) return done(null, payload);
      state.settled = true;
      const digest = state.upload ? uploadDigest(request.raw, state.upload) : state.fingerprint;
      Promise.resolve(digest).then(
        (fingerprint) => settle(request, reply, payload, fingerprint),
        () => release(state.siteId, state.key),
      ).then(() => done(null, payload));
    };

    // Should a request end without sending (it never does; but then): its key is freed.
    const finish: onResponseHookHandler = function (request, _reply, done) {
      const state = request.idempotency;
      if (state && !state.settled) {
        state.settled = true;
        void release(state.siteId, state.key);
      }
      done();
    };

    app.addHook('onRoute', (route: RouteOptions) => {
      if (!route.config?.idempotent) return;
      route.preValidation = [...toArray(route.preValidation), begin as never];
      route.preHandler = [...toArray(route.preHandler), ran as never];
      route.onSend = [...toArray(route.onSend), keep as never];
      route.onResponse = [...toArray(route.onResponse), finish as never];
    });

    const purge = async () => {
      try {
        await store.purge(Date.now());
      } catch (error) {
        app.log.warn({ err: error }, 'could not purge expired idempotency keys');
      }
    };
    let timer: NodeJS.Timeout | null = null;
    app.addHook('onListen', async () => {
      await purge();
      timer = setInterval(() => void purge(), PURGE_INTERVAL_MS);
      timer.unref();
    });
    app.addHook('onClose', async () => {
      if (timer) clearInterval(timer);
    });
  },
  { name: 'idempotency', dependencies: ['db', 'auth'] },
);
