import { hash, randomBytes, randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import type { NewsletterRecipientRow, NewsletterSendRow, SubscriberRow } from '../db/schema.js';
import { validationError } from '../errors.js';
import type { SubscriberSource, SubscriberStatus } from './statuses.js';

/*
 * The rules of newsletters that need no database: what an address is, the tokens of the
 * confirmation and unsubscribe links, how long each lasts, the CSV of an import and an export,
 * and how the API shows a subscriber and a send.
 */

export type { NewsletterRecipientRow, NewsletterSendRow, SubscriberRow };

/** An unconfirmed sign-up expires after this long. */
export const CONFIRM_TTL_MS = 7 * 24 * 3_600_000;
/** At most one confirmation mail per address in this long. */
export const CONFIRM_RESEND_MS = 3_600_000;
/** Permanent refusals (5xx) after which an address is `bouncing` and receives nothing more. */
export const BOUNCES_TO_STOP = 3;
/** Most rows one CSV import takes. */
export const MAX_IMPORT_ROWS = 50_000;
export const MAX_EMAIL_LENGTH = 254;

// Practical, not RFC 5322: one @, no spaces or angle brackets, a dotted domain.
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:".]{2,}$/;

/** The address folded to lower case, or null when it is not one. */
export function normalizeEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  if (email.length === 0 || email.length > MAX_EMAIL_LENGTH || !EMAIL.test(email) || email.includes('..')) return null;
  return email;
}

/** `normalizeEmail`, or a 400 naming the field. */
export function checkEmail(raw: string, path = '/body/email'): string {
  const email = normalizeEmail(raw);
  if (!email) throw validationError('email must be an email address', [{ path, message: 'must be an email address' }]);
  return email;
}

/** A random token for a link (32 bytes, base64url). */
export const newToken = () => randomBytes(32).toString('base64url');
/** Confirmation tokens are stored only as this hash. */
export const tokenHash = (token: string) => hash('sha256', token, 'hex');

/** A new subscriber's row: pending (with a confirmation token) unless imported, which counts as consent. */
export function newSubscriberRow(siteId: string, email: string, source: SubscriberSource, now: Date, confirmToken: string | null): SubscriberRow {
  const imported = source === 'import';
  return {
    id: randomUUID(),
    siteId,
    email,
    status: imported ? 'active' : 'pending',
    consentSource: source,
    consentedAt: imported ? now : null,
    unsubscribeToken: newToken(),
    confirmTokenHash: confirmToken ? tokenHash(confirmToken) : null,
    confirmExpiresAt: confirmToken ? new Date(now.getTime() + CONFIRM_TTL_MS) : null,
    confirmSentAt: confirmToken ? now : null,
    bounces: 0,
    createdAt: now,
    updatedAt: now,
  };
}

/** A subscriber as the staff API shows it (no token). */
export const subscriberView = (row: SubscriberRow) => ({
  id: row.id,
  email: row.email,
  status: row.status,
  consentSource: row.consentSource,
  consentedAt: row.consentedAt,
  bounces: row.bounces,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});
export type SubscriberView = ReturnType<typeof subscriberView>;

export interface SubscriberQuery {
  page: number;
  limit: number;
  status?: SubscriberStatus;
  /** Part of the address. */
  q?: string;
}

export type SubscriberCounts = Record<SubscriberStatus, number>;

// ---- CSV ---------------------------------------------------------------------------------------

/** A cell that a spreadsheet would run as a formula is written with a leading quote. */
const csvCell = (value: string) => {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
};

export const CSV_HEADER = ['email', 'status', 'consent_source', 'consented_at', 'created_at'];

/** One line of the export. */
export const csvLine = (row: SubscriberRow) =>
  [row.email, row.status, row.consentSource, row.consentedAt?.toISOString() ?? '', row.createdAt.toISOString()].map(csvCell).join(',') + '\r\n';

/** What an import found on one line that it did not take. */
export interface ImportProblem {
  line: number;
  email: string;
  reason: 'invalid' | 'duplicate' | 'exists';
}

/**
 * The addresses of an import: a CSV whose column `email` (or, without a header naming it, the
 * first column) holds them. Answers each address with its line, or the lines it cannot take.
 */
export function parseImport(text: string): { emails: { line: number; email: string }[]; problems: ImportProblem[] } {
  let records: string[][];
  try {
    records = parse(text, { relax_column_count: true, skip_empty_lines: true, bom: true, trim: true }) as string[][];
  } catch (error) {
    throw validationError(`The file is not CSV: ${(error as Error).message}`, [{ path: '/body/file', message: 'must be CSV' }]);
  }
  if (records.length === 0) throw validationError('The file holds no addresses', [{ path: '/body/file', message: 'is empty' }]);
  const header = records[0]!.map((cell) => cell.toLowerCase());
  const column = header.indexOf('email');
  const first = column >= 0 ? 1 : 0;
  const index = Math.max(column, 0);
  if (records.length - first > MAX_IMPORT_ROWS) throw validationError(`An import takes at most ${MAX_IMPORT_ROWS} addresses`, [{ path: '/body/file', message: 'has too many lines' }]);
  const emails: { line: number; email: string }[] = [];
  const problems: ImportProblem[] = [];
  const seen = new Set<string>();
  for (let i = first; i < records.length; i++) {
    const raw = records[i]![index] ?? '';
    const line = i + 1;
    const email = normalizeEmail(raw);
    if (!email) problems.push({ line, email: raw, reason: 'invalid' });
    else if (seen.has(email)) problems.push({ line, email, reason: 'duplicate' });
    else {
      seen.add(email);
      emails.push({ line, email });
    }
  }
  return { emails, problems };
}

// ---- sends -------------------------------------------------------------------------------------

export interface SendCounts {
  pending: number;
  sending: number;
  sent: number;
  failed: number;
  bounced: number;
}

/** A send's progress as GET /api/v1/posts/:id/newsletter shows it. */
export function sendView(send: NewsletterSendRow | undefined, counts: SendCounts | null) {
  if (!send || !counts) return { status: 'none' as const, recipients: 0, sent: 0, failed: 0, bounced: 0, createdAt: null, finishedAt: null };
  return { status: send.status, recipients: send.recipients, sent: counts.sent, failed: counts.failed, bounced: counts.bounced, createdAt: send.createdAt, finishedAt: send.finishedAt };
}
export type SendView = ReturnType<typeof sendView>;
