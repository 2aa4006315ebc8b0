/**
 * Errors the core raises. Each carries the HTTP status and the stable UPPER_SNAKE code of the
 * error envelope, so the route layer never has to translate: the errors plugin renders them.
 */
export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[] | Record<string, unknown>,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'AppError';
  }
}

export const notFound = (what: string) => new AppError(404, 'NOT_FOUND', `${what} not found`);

export const validationError = (message: string, details?: ErrorDetail[]) =>
  new AppError(400, 'VALIDATION_ERROR', message, details);

export const conflict = (message: string) => new AppError(409, 'CONFLICT', message);

/** A conditional write (`If-Match`) whose condition no longer holds: someone saved meanwhile. */
export const preconditionFailed = (message: string, details?: Record<string, unknown>) => new AppError(412, 'PRECONDITION_FAILED', message, details);

/**
 * Whether an `If-Match` header holds for the current `etag` (absent: no condition). Strong
 * comparison, as RFC 9110 asks of If-Match: a weak tag never matches.
 */
export function ifMatchHolds(ifMatch: string | undefined, etag: string): boolean {
  if (ifMatch === undefined) return true;
  return ifMatch.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed === etag;
  });
}

/** Every `code` the error envelope can carry: the OpenAPI document lists them as an enum. */
export const ERROR_CODES = [
  'VALIDATION_ERROR',
  'INVALID_JSON',
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'NOT_ACCEPTABLE',
  'REQUEST_TIMEOUT',
  'CONFLICT',
  'PRECONDITION_FAILED',
  'PAYLOAD_TOO_LARGE',
  'FILE_TOO_LARGE',
  'QUOTA_EXCEEDED',
  'URI_TOO_LONG',
  'HEADERS_TOO_LARGE',
  'EXPECTATION_FAILED',
  'UNSUPPORTED_MEDIA_TYPE',
  'UNSUPPORTED_FILE_TYPE',
  'UNKNOWN_MODEL',
  'RATE_LIMITED',
  'IDEMPOTENCY_KEY_REUSED',
  'IDEMPOTENCY_KEY_IN_USE',
  'INTERNAL_ERROR',
  'GENERATION_FAILED',
  'GENERATOR_UNAVAILABLE',
  'DATABASE_BUSY',
  'DATABASE_UNAVAILABLE',
  'GENERATION_TIMEOUT',
  'INSUFFICIENT_STORAGE',
  'INVALID_TOKEN',
  'MAIL_NOT_CONFIGURED',
  'STORAGE_UNAVAILABLE',
  'IMAGE_TOO_LARGE',
  'INVALID_IMAGE',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

const codeOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

/** The error and the errors it wraps (`cause`, as Drizzle wraps the driver's), the outermost first. */
function* causeChain(error: unknown): Generator<object> {
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) yield e;
}

/** True when the error, or one it wraps, carries a code `matches` accepts. */
const hasCode = (error: unknown, matches: (code: string) => boolean): boolean =>
  [...causeChain(error)].some((e) => {
    const code = codeOf(e);
    return code !== undefined && matches(code);
  });

// SQLite's SQLITE_FULL (also what it answers when a write needs a page it cannot get), the file
// system's, and PostgreSQL's disk_full (53100: its server's disk, told through the driver).
const STORAGE_FULL = new Set(['SQLITE_FULL', 'ENOSPC', 'EDQUOT', '53100']);

/**
 * The disk (or the volume's quota) is full, this machine's or the database server's (the
 * driver's error may sit in a wrapper's `cause`). Never the caller's fault, and never a reason
 * to end the process: work waits until space is back.
 */
export const isStorageFull = (error: unknown): boolean => hasCode(error, (code) => STORAGE_FULL.has(code));

/** PostgreSQL refused a write because it takes none (25006 read_only_sql_transaction: a hot standby, or default_transaction_read_only). */
export const isReadOnlyDatabase = (error: unknown): boolean => hasCode(error, (code) => code === '25006');

/** Another connection holds a lock the statement needed past its short busy timeout (SQLITE_BUSY*, SQLITE_LOCKED*). */
export function isDatabaseBusy(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_') || code === 'SQLITE_LOCKED' || code.startsWith('SQLITE_LOCKED_'));
}

// Node's errors for a peer that cannot be reached or went away.
const NETWORK_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);
// What node-postgres says, without a code, when it cannot get or keep a connection.
const LOST_CONNECTION = /timeout exceeded when trying to connect|Connection terminated|connection error and is not queryable|Client was closed and is not queryable/i;

/**
 * The database server (PostgreSQL) cannot be reached or dropped the connection: refused, down,
 * restarting (57P01-57P03), out of connections (53300), any connection exception (08xxx). Like
 * a locked SQLite database, nobody's fault and over once it is back. Drizzle wraps the driver's
 * error in `cause`.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = codeOf(e);
    if (code !== undefined && (NETWORK_FAILURES.has(code) || code.startsWith('08') || /^57P0[123]$/.test(code) || code === '53300')) return true;
    if (code === undefined && LOST_CONNECTION.test(e.message)) return true;
    if ((e as { errors?: unknown }).errors instanceof Array && ((e as unknown as { errors: unknown[] }).errors).some(isDatabaseUnavailable)) return true;
  }
  return false;
}

/**
 * The database takes no write for now (a full disk, a lock held by another program, a read-only
 * standby), though reads go on: what only saves later work (a page's rendered HTML) is skipped.
 */
export const writesRefusedForNow = (error: unknown): boolean => isStorageFull(error) || isDatabaseBusy(error) || isReadOnlyDatabase(error);

/** A condition of the machine, not of the work: retrying later succeeds once it passes. */
export const isTransientStorageError = (error: unknown) => isStorageFull(error) || isDatabaseBusy(error) || isDatabaseUnavailable(error);

/** Seconds a client is told to wait (Retry-After) after DATABASE_BUSY. */
export const DATABASE_BUSY_RETRY_AFTER_S = 1;

export const insufficientStorage = () =>
  new AppError(507, 'INSUFFICIENT_STORAGE', 'The server is out of disk space: nothing was saved. Try again later');

export const databaseBusy = () =>
  new AppError(503, 'DATABASE_BUSY', `The database is locked by another program: try again in ${DATABASE_BUSY_RETRY_AFTER_S} s`);

export const databaseUnavailable = () =>
  new AppError(503, 'DATABASE_UNAVAILABLE', `The database cannot be reached: nothing was changed. Try again in a few seconds`);

/**
 * The object store (STORAGE_URL) did not answer, or answered with an error of its own: the
 * caller's request was fine and may be sent again. `outcome` says what did not happen.
 */
export const storageUnavailable = (outcome: string, cause?: unknown) =>
  new AppError(503, 'STORAGE_UNAVAILABLE', `The file store cannot be reached: ${outcome}. Try again later`, undefined, { cause });

export const isStorageUnavailable = (error: unknown) => error instanceof AppError && error.code === 'STORAGE_UNAVAILABLE';
