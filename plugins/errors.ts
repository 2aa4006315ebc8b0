import { randomUUID } from 'node:crypto';
import { STATUS_CODES as HTTP_STATUS_TEXT, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import {
  AppError,
  DATABASE_BUSY_RETRY_AFTER_S,
  databaseBusy,
  databaseUnavailable,
  insufficientStorage,
  isDatabaseBusy,
  isDatabaseUnavailable,
  isStorageFull,
  type ErrorDetail,
} from '../src/errors.js';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Reuses a caller's X-Request-Id when it is harmless to echo, otherwise makes one. */
export function requestIdFor(headerValue: string | string[] | undefined): string {
  return typeof headerValue === 'string' && SAFE_REQUEST_ID.test(headerValue) ? headerValue : randomUUID();
}

interface ErrorBody {
  statusCode: number;
  code: string;
  message: string;
  details?: unknown;
}

// Fastify's own error codes, mapped onto the envelope's stable codes.
const FASTIFY_ERRORS: Record<string, { statusCode: number; code: string; message?: string; details?: ErrorDetail[] }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { statusCode: 400, code: 'INVALID_JSON', message: 'Request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { statusCode: 400, code: 'INVALID_JSON', message: 'Request body is empty but Content-Type is application/json' },
  FST_ERR_CTP_BODY_TOO_LARGE: { statusCode: 413, code: 'PAYLOAD_TOO_LARGE', message: 'Request body is too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { statusCode: 400, code: 'BAD_REQUEST' },
  FST_INVALID_MULTIPART_CONTENT_TYPE: { statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Expected multipart/form-data' },
  FST_REQ_FILE_TOO_LARGE: { statusCode: 413, code: 'FILE_TOO_LARGE' },
  FST_PARTS_LIMIT: { statusCode: 400, code: 'VALIDATION_ERROR' },
  FST_FILES_LIMIT: {
    statusCode: 400,
    code: 'VALIDATION_ERROR',
    message: 'Send exactly one file, in the part named "file"',
    details: [{ path: '/body/file', message: 'exactly one file part named "file"' }],
  },
  FST_FIELDS_LIMIT: { statusCode: 400, code: 'VALIDATION_ERROR' },
  FST_PROTO_VIOLATION: { statusCode: 400, code: 'VALIDATION_ERROR' },
};

const STATUS_CODES: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  417: 'EXPECTATION_FAILED',
  429: 'RATE_LIMITED',
  431: 'HEADERS_TOO_LARGE',
};

function validationDetails(error: FastifyError): ErrorDetail[] {
  return (error.validation ?? []).map((issue) => {
    const params = issue.params as { missingProperty?: string; allowedValues?: unknown[] };
    const base = issue.instancePath || '';
    const path = `/${error.validationContext ?? 'body'}${params?.missingProperty ? `${base}/${params.missingProperty}` : base}`;
    const message = issue.keyword === 'enum' && params?.allowedValues ? `must be one of: ${params.allowedValues.join(', ')}` : (issue.message ?? 'is invalid');
    return { path, message };
  });
}

export function describe(error: FastifyError | AppError | Error): ErrorBody {
  if (error instanceof AppError) {
    return { statusCode: error.statusCode, code: error.code, message: error.message, details: error.details };
  }
  // The machine's condition, not the request's nor a bug: said as such, in the envelope.
  if (isStorageFull(error)) return describe(insufficientStorage());
  if (isDatabaseBusy(error)) return describe(databaseBusy());
  if (isDatabaseUnavailable(error)) return describe(databaseUnavailable());
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const details = validationDetails(fastifyError);
    return { statusCode: 400, code: 'VALIDATION_ERROR', message: `Invalid request: ${details.map((d) => `${d.path} ${d.message}`).join('; ')}`, details };
  }
  const known = fastifyError.code ? FASTIFY_ERRORS[fastifyError.code] : undefined;
  if (known) return { statusCode: known.statusCode, code: known.code, message: known.message ?? fastifyError.message, details: known.details };
  const status = fastifyError.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return { statusCode: status, code: STATUS_CODES[status] ?? 'BAD_REQUEST', message: fastifyError.message };
  }
  return { statusCode: 500, code: 'INTERNAL_ERROR', message: 'Internal server error' };
}

export function sendError(reply: FastifyReply, request: FastifyRequest, body: ErrorBody): FastifyReply {
  const error: Record<string, unknown> = { code: body.code, message: body.message };
  if (body.details !== undefined) error.details = body.details;
  error.requestId = request.id;
  // Also here, not only in the onRequest hook: errors raised before routing skip the hooks.
  reply.header('X-Request-Id', request.id);
  if (body.statusCode === 401) reply.header('WWW-Authenticate', 'Bearer');
  if (body.code === 'DATABASE_BUSY' || body.code === 'DATABASE_UNAVAILABLE') reply.header('Retry-After', String(DATABASE_BUSY_RETRY_AFTER_S));
  // A refusal raised in the core (a full queue) says how long to wait in its details.
  const retryAfter = (body.details as { retryAfter?: unknown } | undefined)?.retryAfter;
  if (body.statusCode === 429 && typeof retryAfter === 'number' && !reply.hasHeader('Retry-After')) reply.header('Retry-After', String(retryAfter));
  // Refused before its body was read (a full disk mid-upload, a quota): the rest of the body
  // cannot be told apart from a next request on this connection, so the connection ends.
  if (request.raw.complete === false) reply.header('Connection', 'close');
  return reply.code(body.statusCode).type('application/json; charset=utf-8').send({ success: false, error });
}

/** The request's connection ended before the request did (an aborted upload, a closed tab). */
function clientWentAway(request: FastifyRequest, error: FastifyError): boolean {
  const raw = request.raw;
  if (raw.complete) return false;
  return raw.aborted || raw.destroyed || raw.socket?.destroyed === true || error.code === 'ECONNRESET' || error.message === 'aborted';
}

/** Envelope of an error Node's HTTP parser raises before a request exists (see clientErrorHandler). */
function describeClientError(error: NodeJS.ErrnoException): ErrorBody {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { statusCode: 408, code: 'REQUEST_TIMEOUT', message: 'The request was not received in time: headers and body must arrive within the request timeout' };
    case 'HPE_HEADER_OVERFLOW':
      return { statusCode: 431, code: 'HEADERS_TOO_LARGE', message: 'The request headers are too large' };
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_STRICT':
      return { statusCode: 400, code: 'BAD_REQUEST', message: 'Malformed chunked transfer encoding' };
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return { statusCode: 400, code: 'BAD_REQUEST', message: 'Invalid Content-Length header' };
    case 'HPE_INVALID_METHOD':
      return { statusCode: 400, code: 'BAD_REQUEST', message: 'Unknown HTTP method' };
    default:
      return { statusCode: 400, code: 'BAD_REQUEST', message: 'Malformed HTTP request' };
  }
}

/**
 * Fastify's `clientErrorHandler`: errors of Node's HTTP parser (headers too large, malformed
 * chunked encoding, a bad Content-Length, a request that took longer than REQUEST_TIMEOUT_MS)
 * come before any request or hook, so they are answered here, on the socket, in the same
 * envelope and with an X-Request-Id; then the connection is closed.
 */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const body = describeClientError(error);
  const requestId = randomUUID();
  this.log.debug({ err: error, requestId }, 'malformed or incomplete request refused');
  // A response already under way (headers sent) cannot be replaced: just close.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const payload = JSON.stringify({ success: false, error: { code: body.code, message: body.message, requestId } });
    socket.write(
      `HTTP/1.1 ${body.statusCode} ${HTTP_STATUS_TEXT[body.statusCode] ?? 'Bad Request'}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(payload)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        payload,
    );
  }
  socket.destroy(error);
}

/**
 * An envelope written straight on a raw response: for what Node's HTTP server would otherwise
 * answer itself, bare, before Fastify sees a request (an unknown `Expect`).
 */
function sendRawError(req: IncomingMessage, res: ServerResponse, body: ErrorBody): void {
  const requestId = requestIdFor(req.headers['x-request-id']);
  const payload = JSON.stringify({ success: false, error: { code: body.code, message: body.message, requestId } });
  res.writeHead(body.statusCode, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
    'X-Request-Id': requestId,
    Connection: 'close',
  });
  res.end(payload);
}

/**
 * The error contract for the whole app: every failure leaves as the error envelope, 5xx
 * without internals, and every response carries X-Request-Id.
 */
export default fp(
  async function errorsPlugin(app: FastifyInstance) {
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('X-Request-Id', request.id);
      // Node's own check answers a bare 400, so the server turns it off (requireHostHeader)
      // and it is made here, in the envelope: HTTP/1.1 requires Host (RFC 9112, 3.2).
      if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
        reply.header('Connection', 'close');
        sendError(reply, request, { statusCode: 400, code: 'BAD_REQUEST', message: 'An HTTP/1.1 request needs a Host header' });
        return;
      }
      done();
    });

    // An `Expect` other than 100-continue: Node answers a bare 417 unless someone listens.
    app.server?.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
      sendRawError(req, res, { statusCode: 417, code: 'EXPECTATION_FAILED', message: `Unsupported Expect header: only 100-continue is supported` }),
    );

    app.setErrorHandler((error: FastifyError, request, reply) => {
      if (clientWentAway(request, error)) {
        // Nobody is left to answer: a client that hangs up mid-upload is not a server fault.
        request.log.info({ reason: error.message }, 'client went away before the request was complete');
        return sendError(reply, request, { statusCode: 400, code: 'BAD_REQUEST', message: 'The client closed the connection before the request was complete' });
      }
      const body = describe(error);
      if (body.code === 'INSUFFICIENT_STORAGE') {
        request.server.readiness?.noteStorageFull();
        request.log.warn({ err: error }, 'request refused: the disk is full');
      } else if (body.code === 'DATABASE_BUSY') request.log.warn({ err: error }, 'request refused: the database is locked');
      else if (body.code === 'DATABASE_UNAVAILABLE') request.log.warn({ err: error }, 'request refused: the database cannot be reached');
      else if (body.code === 'STORAGE_UNAVAILABLE') request.log.warn({ err: error }, 'request refused: the file store cannot be reached');
      else if (body.statusCode >= 500) request.log.error({ err: error }, 'request failed');
      else request.log.debug({ err: error }, 'request refused');
      return sendError(reply, request, body);
    });

    app.setNotFoundHandler((request, reply) =>
      sendError(reply, request, { statusCode: 404, code: 'NOT_FOUND', message: `Route ${request.method} ${request.url.split('?')[0]} not found` }),
    );
  },
  { name: 'errors' },
);
