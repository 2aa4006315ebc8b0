import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { maskDatabaseUrl, type DatabaseTarget } from './db/url.js';
import { DEFAULT_MAX_EXTRACTED_TEXT_MB, DEFAULT_SITE_STORAGE_QUOTA_MB } from './limits.js';

export type GeneratorMode = 'auto' | 'ollama' | 'builtin';

/** Where knowledge files are stored (STORAGE_URL): local disk under DATA_DIR/storage, or an S3-compatible bucket. */
export type StorageLocation = { kind: 'local' } | S3Location;

export interface S3Location {
  kind: 's3';
  bucket: string;
  /** Put before every key, without slashes at either end; empty for none. */
  prefix: string;
  /** The store's URL (`endpoint=`); null for AWS itself. */
  endpoint: string | null;
  region: string;
  forcePathStyle: boolean;
  /** From AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; null leaves them to the SDK's own lookup (profiles, instance roles). */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | null;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Where the data lives (DATABASE_URL): SQLite in DATA_DIR by default, or PostgreSQL. */
  database: DatabaseTarget;
  logLevel: string;
  siteName: string;
  bootstrapApiKey: string | null;
  generator: GeneratorMode;
  ollamaHost: string;
  ollamaModel: string;
  /** Embedding model for meaning-based retrieval (OLLAMA_EMBED_MODEL); null: search is lexical only. */
  ollamaEmbedModel: string | null;
  /**
   * The embedding model is the default one (OLLAMA_EMBED_MODEL unset, GENERATOR not builtin):
   * retrieval is hybrid only while Ollama answers and has it pulled, and nothing is queued for
   * it before then.
   */
  ollamaEmbedAuto?: boolean;
  generationTimeoutMs: number;
  jobPollMs: number;
  jobConcurrency: number;
  /** Threads composing builtin posts (BUILTIN_WORKERS); 0 composes on the event loop. */
  builtinWorkers: number;
  jobLeaseMs: number;
  jobMaxAttempts: number;
  shutdownTimeoutMs: number;
  /** How long a start waits for a PostgreSQL or a bucket that cannot be reached yet (STARTUP_WAIT_SECONDS; 0: fail at once). */
  startupWaitMs: number;
  /** Origin the public pages of sites without their own `url` are addressed under (+ /sites/<handle>). */
  publicBaseUrl: string;
  /** Most text taken from one knowledge file (MAX_EXTRACTED_TEXT_MB), in bytes. */
  maxExtractedTextBytes: number;
  /** A site's stored files plus their index (SITE_STORAGE_QUOTA_MB), in bytes. */
  siteStorageQuotaBytes: number;
  /** Time to receive a whole request, headers and body (REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** Webhooks may call loopback, private and link-local addresses (WEBHOOK_ALLOW_PRIVATE). */
  webhookAllowPrivate: boolean;
  /** Longest a webhook attempt may take, connection to last byte read (WEBHOOK_TIMEOUT_MS). */
  webhookTimeoutMs: number;
  /** Deliveries made at the same time, beside and never behind generation tasks (WEBHOOK_CONCURRENCY). */
  webhookConcurrency: number;
  /** Most newsletter messages one instance starts per minute (MAIL_RATE_PER_MINUTE). */
  mailRatePerMinute: number;
  /** Wait before a delivery's first retry, doubling for each later one (WEBHOOK_RETRY_BASE_MS). */
  webhookRetryBaseMs: number;
  /** Rate limits: requests per window (RATE_LIMIT_WINDOW_MS) per API key, for generate, and per client address on public pages; 0 is no limit. */
  rateLimitWindowMs: number;
  rateLimitMax: number;
  rateLimitGenerateMax: number;
  rateLimitPublicMax: number;
  /** Failed authentications (401) per window per client address (RATE_LIMIT_AUTH_FAIL_MAX); 0 is no limit. */
  rateLimitAuthFailMax: number;
  /** `/ready` shows where the database, the store and Ollama are to callers without a key (READY_DETAILS). */
  readyDetails: boolean;
  /** Where knowledge files are stored (STORAGE_URL). */
  storage: StorageLocation;
  /** PUBLIC_BASE_URL's origin when it is set: the service's own origin for the CSRF check of cookie requests (else each request's own). */
  publicOrigin: string | null;
  /** Whom Fastify believes about X-Forwarded-For/-Proto/-Host (TRUST_PROXY): false, true, a number of hops, or addresses/CIDRs. */
  trustProxy: boolean | number | string;
  /** Views of the public pages are counted (ANALYTICS=on, the default; off counts nothing, stats stay readable). */
  analytics: boolean;
  /** Daily stats older than this many days are deleted (STATS_RETENTION_DAYS, default 730). */
  statsRetentionDays: number;
  /** Staff sessions end after this long without a request (SESSION_IDLE_HOURS, default 7 days), in ms. */
  sessionIdleMs: number;
  /** ... and this long after sign-in, whatever happens (SESSION_MAX_DAYS, default 30), in ms. */
  sessionMaxMs: number;
  /** The email of the owner account made at the first start, with its setup link (ADMIN_EMAIL). */
  adminEmail: string;
  /** Outgoing mail (SMTP_URL, MAIL_FROM); null when SMTP_URL is unset: nothing is sent. */
  mail: MailConfig | null;
  /** Spam guard of the public forms: the proof of work's difficulty, the highest counter a challenge hides (SPAM_GUARD_DIFFICULTY). */
  spamGuardDifficulty: number;
  /** Least time between a form shown and submitted (SPAM_GUARD_MIN_FILL_SECONDS), in ms. */
  spamGuardMinFillMs: number;
  /** Submissions per client address, site and form per window (SPAM_GUARD_RATE_MAX, 0 no limit; SPAM_GUARD_RATE_WINDOW_SECONDS). */
  spamGuardRateMax: number;
  spamGuardRateWindowMs: number;
}

/** Where outgoing mail goes: an SMTP server, and the sender every message names. */
export interface MailConfig {
  /** `smtp://` (STARTTLS when offered) or `smtps://` (TLS from the start), with user and password if the server wants them. */
  smtpUrl: string;
  /** The From address: `Blog <no-reply@example.com>` or a bare address. */
  from: string;
}

/** A bad environment variable: the message names it so a failed start says what to fix. */
export class ConfigError extends Error {
  constructor(readonly variable: string, reason: string) {
    super(`Invalid environment variable ${variable}: ${reason}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `expected an integer, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `expected ${min}..${max}, got ${value}`);
  return value;
}

function readEnum<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = raw.trim() as T;
  if (!allowed.includes(value)) throw new ConfigError(name, `expected one of ${allowed.join(', ')}, got "${raw}"`);
  return value;
}

function readString(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  return raw.trim();
}

function readBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = raw.trim().toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new ConfigError(name, `expected true or false, got "${raw}"`);
}

/** An Ollama model name (`nomic-embed-text`, `library/bge-m3:567m`), or null when unset. */
/** The embedding model Ollama is asked for when OLLAMA_EMBED_MODEL does not name one. */
export const DEFAULT_EMBED_MODEL = 'nomic-embed-text';

/**
 * OLLAMA_EMBED_MODEL: a model name (hybrid retrieval with it), `off` (lexical only), or unset:
 * with Ollama in play (GENERATOR auto or ollama) the default model, used while Ollama has it
 * (`auto`, as GENERATOR=auto does for writing); with GENERATOR=builtin, off.
 */
function readEmbedModel(env: Env, generator: GeneratorMode): { model: string | null; auto: boolean } {
  const raw = env.OLLAMA_EMBED_MODEL?.trim();
  if (raw?.toLowerCase() === 'off') return { model: null, auto: false };
  const named = readModelName(env, 'OLLAMA_EMBED_MODEL');
  if (named) return { model: named, auto: false };
  return generator === 'builtin' ? { model: null, auto: false } : { model: DEFAULT_EMBED_MODEL, auto: true };
}

function readModelName(env: Env, name: string): string | null {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return null;
  const value = raw.trim();
  if (!/^[A-Za-z0-9][A-Za-z0-9._\-/:]{0,199}$/.test(value)) throw new ConfigError(name, `expected a model name such as nomic-embed-text, got "${raw}"`);
  return value;
}

function readUrl(env: Env, name: string, fallback: string): string {
  const value = readString(env, name, fallback);
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new ConfigError(name, `expected an http(s) URL, got "${value}"`);
  }
  return value.replace(/\/+$/, '');
}

/** A URL as it may be shown: the password of any URL in it (an endpoint in its query too, encoded or not) replaced by `***`. */
export function redactUrl(value: string): string {
  // ASCII escapes decoded (never fails, unlike decodeURIComponent), so `%3A...%40` is seen too.
  const decoded = value.replace(/%([0-7][0-9a-f])/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return decoded.replace(/([a-z][a-z0-9+.-]*:\/\/[^/?#@:\s]*:)[^/?#@\s]*@/gi, '$1***@');
}

const S3_QUERY_PARAMETERS = ['endpoint', 'region', 'forcePathStyle'];
// Today's S3 rules for a bucket name: 3-63 lowercase letters, digits, dots and hyphens.
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * STORAGE_URL: unset is local disk; `s3://<bucket>[/<prefix>]?endpoint=<url>&region=<region>&forcePathStyle=true`
 * an S3-compatible bucket, whose credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
 */
/**
 * TRUST_PROXY: unset or false trusts no proxy (the connection's own address and protocol count);
 * true trusts any; a number trusts that many hops; else a comma-separated list of addresses or
 * CIDR ranges of the proxies.
 */
function readTrustProxy(env: Env): boolean | number | string {
  const raw = env.TRUST_PROXY?.trim() ?? '';
  if (raw === '' || /^(false|0)$/i.test(raw)) return false;
  if (/^(true|1)$/i.test(raw) && raw !== '1') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  if (!/^[0-9A-Fa-f.:/, ]+$/.test(raw)) throw new ConfigError('TRUST_PROXY', `expected true, false, a number of hops or addresses/CIDRs such as 10.0.0.0/8, got "${raw}"`);
  return raw;
}

function readAdminEmail(env: Env): string {
  const email = readString(env, 'ADMIN_EMAIL', 'admin@example.com').toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new ConfigError('ADMIN_EMAIL', `expected an email address, got "${email}"`);
  return email;
}

// An address as RFC 5322 allows in practice for a sender: `Name <a@b.c>` or `a@b.c`.
const BARE_ADDRESS = /^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/;
const NAMED_ADDRESS = /^[^<>\r\n]{1,200}<([^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+)>$/;

/**
 * SMTP_URL and MAIL_FROM: unset SMTP_URL is no mail at all; otherwise `smtp://` or `smtps://`
 * with a host, and MAIL_FROM a sender address (defaulting to no-reply at PUBLIC_BASE_URL's host).
 */
function readMail(env: Env, publicBaseUrl: string): MailConfig | null {
  const raw = env.SMTP_URL?.trim();
  const rawFrom = env.MAIL_FROM?.trim();
  if (!raw) return null;
  const expected = 'expected smtp://[user:password@]host[:port] or smtps://...';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('SMTP_URL', `${expected}, got "${redactUrl(raw)}" (percent-encode special characters of the password)`);
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new ConfigError('SMTP_URL', `${expected}, got "${redactUrl(raw)}"`);
  if (!url.hostname) throw new ConfigError('SMTP_URL', `the URL names no host, got "${redactUrl(raw)}"`);
  if (url.pathname && url.pathname !== '/') throw new ConfigError('SMTP_URL', `no path is allowed, got "${redactUrl(raw)}"`);
  if (url.password && !url.username) throw new ConfigError('SMTP_URL', 'a password needs a user name');
  let from: string;
  if (rawFrom) {
    if (!BARE_ADDRESS.test(rawFrom) && !NAMED_ADDRESS.test(rawFrom)) throw new ConfigError('MAIL_FROM', `expected an address such as "Blog <no-reply@example.com>" or no-reply@example.com, got "${rawFrom}"`);
    from = rawFrom;
  } else {
    const host = new URL(publicBaseUrl).hostname;
    from = `no-reply@${host.includes('.') ? host : `${host}.localdomain`}`;
  }
  return { smtpUrl: raw, from };
}

function readStorage(env: Env): StorageLocation {
  const raw = env.STORAGE_URL?.trim();
  if (!raw) return { kind: 'local' };
  const fail = (reason: string): never => {
    throw new ConfigError('STORAGE_URL', `${reason}, got "${redactUrl(raw)}"; expected s3://<bucket>[/<prefix>]?endpoint=<url>&region=<region>&forcePathStyle=true`);
  };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail('not a URL');
  }
  if (url.protocol !== 's3:') fail('only s3:// URLs are supported (leave it unset for local disk)');
  if (url.username || url.password) fail('credentials do not belong in the URL: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  if (!BUCKET_NAME.test(url.hostname)) fail('the bucket name must be 3-63 lowercase letters, digits, dots or hyphens');
  if (url.port) fail('a port belongs in endpoint=, not after the bucket');
  if (url.hash) fail('no #fragment is allowed');
  let prefix = '';
  try {
    prefix = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, '');
  } catch {
    fail('the prefix is not valid percent-encoding');
  }
  if (prefix.includes('//')) fail('the prefix must not have empty segments');
  const unknown = [...url.searchParams.keys()].filter((name) => !S3_QUERY_PARAMETERS.includes(name));
  if (unknown.length) fail(`unknown parameter ${unknown.join(', ')} (known: ${S3_QUERY_PARAMETERS.join(', ')})`);

  let endpoint: string | null = null;
  const rawEndpoint = url.searchParams.get('endpoint');
  if (rawEndpoint !== null) {
    let parsed: URL | null = null;
    try {
      parsed = new URL(rawEndpoint);
    } catch {
      // refused below
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) return fail('endpoint must be an http(s) URL');
    if (parsed.username || parsed.password) fail('credentials do not belong in endpoint: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
    endpoint = rawEndpoint.replace(/\/+$/, '');
  }
  const forcePathStyle = url.searchParams.get('forcePathStyle') ?? 'false';
  if (forcePathStyle !== 'true' && forcePathStyle !== 'false') fail('forcePathStyle must be true or false');
  const region = url.searchParams.get('region') ?? (env.AWS_REGION?.trim() || 'us-east-1');
  if (!/^[a-z0-9-]{1,64}$/i.test(region)) fail('region must be a region name such as us-east-1');

  return { kind: 's3', bucket: url.hostname, prefix, endpoint, region, forcePathStyle: forcePathStyle === 'true', credentials: readAwsCredentials(env) };
}

function readAwsCredentials(env: Env): S3Location['credentials'] {
  const accessKeyId = env.AWS_ACCESS_KEY_ID?.trim();
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY?.trim();
  if (!accessKeyId && !secretAccessKey) return null;
  if (!accessKeyId) throw new ConfigError('AWS_ACCESS_KEY_ID', 'is required with AWS_SECRET_ACCESS_KEY');
  if (!secretAccessKey) throw new ConfigError('AWS_SECRET_ACCESS_KEY', 'is required with AWS_ACCESS_KEY_ID');
  const sessionToken = env.AWS_SESSION_TOKEN?.trim();
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}

const MiB = 1024 * 1024;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function loadConfig(env: Env = process.env): Config {
  const bootstrap = env.BOOTSTRAP_API_KEY?.trim() || null;
  if (bootstrap !== null && !/^[A-Za-z0-9_\-.~]{20,200}$/.test(bootstrap)) {
    throw new ConfigError('BOOTSTRAP_API_KEY', 'expected 20-200 characters of A-Z a-z 0-9 _ - . ~');
  }
  const siteName = readString(env, 'SITE_NAME', 'My Blog');
  if (siteName.length > 200) throw new ConfigError('SITE_NAME', 'at most 200 characters');
  const port = readInt(env, 'PORT', 3000, 0, 65535);
  // One core stays with the event loop (requests, search, the database); the rest compose.
  const host = readString(env, 'HOST', '127.0.0.1');
  // By default the public address is the one the first start prints (the setup link's): the
  // listening address, or localhost when it listens on every interface.
  const publicBaseUrl = readUrl(env, 'PUBLIC_BASE_URL', `http://${addressForLinks(host)}:${port}`);
  const generator = readEnum<GeneratorMode>(env, 'GENERATOR', 'auto', ['auto', 'ollama', 'builtin']);
  const embedding = readEmbedModel(env, generator);
  const builtinWorkers = readInt(env, 'BUILTIN_WORKERS', Math.max(1, Math.min(4, os.availableParallelism() - 1)), 0, 64);
  return {
    port,
    host,
    dataDir: path.resolve(readString(env, 'DATA_DIR', './data')),
    database: databaseTarget(env),
    logLevel: readEnum(env, 'LOG_LEVEL', 'info', LOG_LEVELS),
    siteName,
    bootstrapApiKey: bootstrap,
    generator,
    ollamaHost: readUrl(env, 'OLLAMA_HOST', 'http://127.0.0.1:11434'),
    ollamaModel: readString(env, 'OLLAMA_MODEL', 'llama3.2'),
    ollamaEmbedModel: embedding.model,
    ollamaEmbedAuto: embedding.auto,
    generationTimeoutMs: readInt(env, 'GENERATION_TIMEOUT_MS', 120_000, 100, 3_600_000),
    jobPollMs: readInt(env, 'JOB_POLL_MS', 1000, 10, 3_600_000),
    // Twice the composer's threads, and 4 at least: a task's search and post write overlap another's composing.
    jobConcurrency: readInt(env, 'JOB_CONCURRENCY', Math.max(4, 2 * builtinWorkers), 1, 64),
    builtinWorkers,
    jobLeaseMs: readInt(env, 'JOB_LEASE_MS', 60_000, 1000, 86_400_000),
    jobMaxAttempts: readInt(env, 'JOB_MAX_ATTEMPTS', 3, 1, 100),
    shutdownTimeoutMs: readInt(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    startupWaitMs: readInt(env, 'STARTUP_WAIT_SECONDS', 60, 0, 86_400) * 1000,
    publicBaseUrl,
    maxExtractedTextBytes: readInt(env, 'MAX_EXTRACTED_TEXT_MB', DEFAULT_MAX_EXTRACTED_TEXT_MB, 1, 1024) * MiB,
    siteStorageQuotaBytes: readInt(env, 'SITE_STORAGE_QUOTA_MB', DEFAULT_SITE_STORAGE_QUOTA_MB, 1, 16 * 1024 * 1024) * MiB,
    requestTimeoutMs: readInt(env, 'REQUEST_TIMEOUT_MS', 120_000, 1000, 3_600_000),
    webhookAllowPrivate: readBool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    webhookTimeoutMs: readInt(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    webhookConcurrency: readInt(env, 'WEBHOOK_CONCURRENCY', 16, 1, 64),
    mailRatePerMinute: readInt(env, 'MAIL_RATE_PER_MINUTE', 600, 1, 1_000_000),
    webhookRetryBaseMs: readInt(env, 'WEBHOOK_RETRY_BASE_MS', 5000, 10, 3_600_000),
    rateLimitWindowMs: readInt(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 1000, 86_400_000),
    // Above what one process serves (a few thousand requests a second on the benchmark machine):
    // the benchmarks and any well-behaved client never meet them; operators lower them.
    rateLimitMax: readInt(env, 'RATE_LIMIT_MAX', 600_000, 0, 1_000_000_000),
    rateLimitGenerateMax: readInt(env, 'RATE_LIMIT_GENERATE_MAX', 3000, 0, 1_000_000_000),
    rateLimitPublicMax: readInt(env, 'RATE_LIMIT_PUBLIC_MAX', 1_200_000, 0, 1_000_000_000),
    // Far below the others: a client with its key never fails; one guessing keys does nothing else.
    rateLimitAuthFailMax: readInt(env, 'RATE_LIMIT_AUTH_FAIL_MAX', 300, 0, 1_000_000_000),
    readyDetails: readBool(env, 'READY_DETAILS', false),
    storage: readStorage(env),
    publicOrigin: env.PUBLIC_BASE_URL?.trim() ? new URL(readUrl(env, 'PUBLIC_BASE_URL', '')).origin : null,
    trustProxy: readTrustProxy(env),
    analytics: readEnum(env, 'ANALYTICS', 'on', ['on', 'off']) === 'on',
    statsRetentionDays: readInt(env, 'STATS_RETENTION_DAYS', 730, 1, 36_500),
    sessionIdleMs: readInt(env, 'SESSION_IDLE_HOURS', 7 * 24, 1, 24 * 366) * 3_600_000,
    sessionMaxMs: readInt(env, 'SESSION_MAX_DAYS', 30, 1, 366) * 86_400_000,
    adminEmail: readAdminEmail(env),
    mail: readMail(env, publicBaseUrl),
    spamGuardDifficulty: readInt(env, 'SPAM_GUARD_DIFFICULTY', 50_000, 10, 10_000_000),
    spamGuardMinFillMs: readInt(env, 'SPAM_GUARD_MIN_FILL_SECONDS', 3, 0, 3600) * 1000,
    spamGuardRateMax: readInt(env, 'SPAM_GUARD_RATE_MAX', 5, 0, 1_000_000),
    spamGuardRateWindowMs: readInt(env, 'SPAM_GUARD_RATE_WINDOW_SECONDS', 600, 1, 86_400) * 1000,
  };
}

export type { DatabaseTarget };

/**
 * DATABASE_URL read: unset or blank is SQLite in DATA_DIR (as ever); `file:` URLs and plain paths
 * name a SQLite file; `postgres://` and `postgresql://` URLs a PostgreSQL database, reached
 * through a pool of at most DATABASE_POOL_MAX connections (default 10). Anything else is a
 * configuration error naming DATABASE_URL (with the URL's password hidden).
 */
export function databaseTarget(env: Env = process.env): DatabaseTarget {
  const raw = env.DATABASE_URL?.trim() ?? '';
  if (raw === '') return { kind: 'sqlite', path: null };
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(raw)?.[1]?.toLowerCase();
  if (scheme === 'postgres' || scheme === 'postgresql') {
    if (!raw.slice(scheme.length + 1).startsWith('//') || !URL.canParse(raw)) {
      throw new ConfigError('DATABASE_URL', `expected ${scheme}://[user[:password]@]host[:port]/database, got "${maskDatabaseUrl(raw)}" (percent-encode special characters of the password)`);
    }
    return { kind: 'postgres', url: raw, poolMax: readInt(env, 'DATABASE_POOL_MAX', 10, 1, 1000) };
  }
  if (scheme === 'file') {
    // file:///abs/blog.db is a URL; file:blog.db (as SQLite's own tools write it) a relative path.
    const rest = raw.slice('file:'.length);
    let file: string | null = null;
    try {
      file = rest.startsWith('//') ? fileURLToPath(raw) : rest ? path.resolve(decodeURIComponent(rest)) : null;
    } catch {
      // Another host than this one, an unencoded %: not a file here.
    }
    if (!file || file.endsWith(path.sep)) throw new ConfigError('DATABASE_URL', `expected the URL of a SQLite file, got "${raw}"`);
    return { kind: 'sqlite', path: file };
  }
  if (scheme === undefined) return { kind: 'sqlite', path: path.resolve(raw) };
  throw new ConfigError('DATABASE_URL', `expected postgres://, postgresql://, a file: URL or a path, got "${maskDatabaseUrl(raw)}"`);
}

/** A listening address as a link's host: localhost for every interface, an IPv6 literal in brackets. */
export function addressForLinks(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return 'localhost';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
