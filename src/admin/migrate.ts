import fs from 'node:fs';
import type { SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import { redactUrl, type Config } from '../config.js';
import { databaseFile, openDatabase, type Db } from '../db/sqlite.js';
import { DataDirLockedError, lockDataDir } from '../db/lock.js';
import * as pg from '../db/pg-schema.js';
import { maskDatabaseUrl, openPostgres, type PgExecutor, type PostgresHandle } from '../db/postgres.js';
import { postgresStepDatabase } from '../db/postgres-steps.js';
import * as lite from '../db/schema.js';
import { INTERRUPTED } from '../jobs/loop.js';
import { releaseSteps } from '../jobs/store.js';
import { postgresAdapters } from '../stores/postgres.js';
import { mediaKey } from '../media/view.js';
import type { MediaRow } from '../db/schema.js';
import { createObjectStore, FileStorage, formatSize, type ObjectStore, type StoreDescription } from '../knowledge/storage.js';
import { getTableColumns, getTableName, sql, drizzleErrors } from '../db/orm.js';

const { DrizzleQueryError } = drizzleErrors;

/*
 * `blog-admin migrate-to-postgres --to <url>`: copies a site's SQLite database (and, with
 * STORAGE_URL, its knowledge files) into an empty PostgreSQL database, row for row, with the same
 * ids and values, so that existing API keys, URLs and webhook ids keep working.
 */

/** A refusal or a failure a person can act on: printed as one message, never as a stack trace. */
export class MigrationError extends Error {
  override name = 'MigrationError';
}

interface TableCopy {
  sqlite: SQLiteTable;
  pg: PgTable;
  /** Fields that name a row in messages (its primary key). */
  key: readonly string[];
  /**
   * A PostgreSQL identity column whose sequence must continue after the copied values: `rowid`,
   * PostgreSQL's own column that stands for SQLite's hidden rowid (copied from it), or `id`.
   */
  identity?: 'rowid' | 'id';
}

/**
 * Every table that holds data, parents before children (foreign keys are checked row by row).
 * Not copied, as PostgreSQL has its own: SQLite's FTS5 index of chunks (PostgreSQL computes
 * `search_vector`), its migration journal and sqlite_sequence (the sequences are moved on
 * instead), and PostgreSQL's key_changes counter (its triggers move it as keys are copied).
 */
export const COPIED_TABLES: readonly TableCopy[] = [
  { sqlite: lite.sites, pg: pg.sites, key: ['id'] },
  { sqlite: lite.apiKeys, pg: pg.apiKeys, key: ['id'] },
  { sqlite: lite.posts, pg: pg.posts, key: ['id'], identity: 'rowid' },
  { sqlite: lite.slugCounters, pg: pg.slugCounters, key: ['siteId', 'base'] },
  { sqlite: lite.postCounts, pg: pg.postCounts, key: ['siteId'] },
  { sqlite: lite.postSlugRedirects, pg: pg.postSlugRedirects, key: ['siteId', 'slug'] },
  { sqlite: lite.postRevisions, pg: pg.postRevisions, key: ['id'] },
  { sqlite: lite.postPendingChanges, pg: pg.postPendingChanges, key: ['postId'] },
  { sqlite: lite.knowledgeFiles, pg: pg.knowledgeFiles, key: ['id'] },
  { sqlite: lite.knowledgeChunks, pg: pg.knowledgeChunks, key: ['id'], identity: 'id' },
  { sqlite: lite.media, pg: pg.media, key: ['id'] },
  { sqlite: lite.jobs, pg: pg.jobs, key: ['id'] },
  { sqlite: lite.webhooks, pg: pg.webhooks, key: ['id'], identity: 'rowid' },
  { sqlite: lite.webhookDeliveries, pg: pg.webhookDeliveries, key: ['id'], identity: 'rowid' },
  { sqlite: lite.webhookAttempts, pg: pg.webhookAttempts, key: ['id'], identity: 'id' },
  { sqlite: lite.idempotencyKeys, pg: pg.idempotencyKeys, key: ['siteId', 'key'] },
  // Staff accounts: people keep their passwords, roles, sessions and pending links.
  { sqlite: lite.users, pg: pg.users, key: ['id'] },
  { sqlite: lite.memberships, pg: pg.memberships, key: ['userId', 'siteId'] },
  { sqlite: lite.sessions, pg: pg.sessions, key: ['id'] },
  { sqlite: lite.accountTokens, pg: pg.accountTokens, key: ['tokenHash'] },
  { sqlite: lite.invitations, pg: pg.invitations, key: ['id'] },
  // Stats, and the day's salts and visitor hashes (a reader of today is not counted twice after the move).
  { sqlite: lite.analyticsDays, pg: pg.analyticsDays, key: ['siteId', 'day'] },
  { sqlite: lite.analyticsPages, pg: pg.analyticsPages, key: ['siteId', 'day', 'page'] },
  { sqlite: lite.analyticsReferrers, pg: pg.analyticsReferrers, key: ['siteId', 'day', 'referrer'] },
  { sqlite: lite.analyticsSalts, pg: pg.analyticsSalts, key: ['day'] },
  { sqlite: lite.analyticsVisitors, pg: pg.analyticsVisitors, key: ['siteId', 'day', 'page', 'hash'] },
  // The spam guard's key (challenges issued before the move stay good), the answered challenges (still refused as replays) and windows.
  { sqlite: lite.spamGuardKeys, pg: pg.spamGuardKeys, key: ['name'] },
  { sqlite: lite.spamGuardChallenges, pg: pg.spamGuardChallenges, key: ['id'] },
  { sqlite: lite.spamGuardWindows, pg: pg.spamGuardWindows, key: ['key'] },
  // Newsletters: subscribers, and each post's send with its recipients (a send under way resumes after the move).
  { sqlite: lite.subscribers, pg: pg.subscribers, key: ['id'] },
  { sqlite: lite.newsletterSends, pg: pg.newsletterSends, key: ['postId'] },
  { sqlite: lite.newsletterRecipients, pg: pg.newsletterRecipients, key: ['postId', 'subscriberId'] },
  // Readers' comments, after their posts (a reply after its parent: oldest first).
  { sqlite: lite.comments, pg: pg.comments, key: ['id'] },
  { sqlite: lite.commentNotices, pg: pg.commentNotices, key: ['postId'] },
  { sqlite: lite.commentMailChoices, pg: pg.commentMailChoices, key: ['userId', 'siteId'] },
];

/**
 * SQLite tables that are derived or bookkeeping: nothing to copy (see COPIED_TABLES). Chunk
 * embeddings are derived too: the first start on PostgreSQL with OLLAMA_EMBED_MODEL queues
 * their making again (their chunks keep their ids, but vectors are cheap to remake and would
 * make the copy many times larger).
 */
export const SKIPPED_SQLITE_TABLES = /^(knowledge_fts(_.*)?|knowledge_embeddings|__drizzle_migrations|sqlite_.*)$/;

/** How much is read, written and uploaded at a time (tests make them small). */
export interface MigrationBatches {
  /** Rows read from SQLite at a time. */
  readRows: number;
  /** Most parameters in one INSERT (PostgreSQL's limit is 65,535). */
  insertParameters: number;
  /** About the most text one INSERT carries, so that a batch of long posts stays a modest message. */
  insertChars: number;
  /** Knowledge files uploaded at the same time. */
  uploads: number;
  /** A progress line every this many files uploaded. */
  filesPerProgressLine: number;
}

export const DEFAULT_BATCHES: MigrationBatches = {
  readRows: 500,
  insertParameters: 30_000,
  insertChars: 8 * 1024 * 1024,
  uploads: 4,
  filesPerProgressLine: 100,
};
/** How many offending rows a failed migration lists. */
const MAX_LISTED_PROBLEMS = 20;

export interface TableCount {
  table: string;
  sqlite: number;
  postgres: number;
}

export interface MissingFile {
  id: string;
  siteId: string;
  storageKey: string;
}

export interface MigrationReport {
  source: { kind: 'sqlite'; file: string };
  target: { kind: 'postgres'; url: string };
  tables: TableCount[];
  /** Jobs the old server left `running` (it stopped without finishing them), released as its next start would have. */
  interruptedJobs: number;
  files: {
    /** `s3`: copied into STORAGE_URL's bucket; `local`: left where they are, under DATA_DIR/storage. */
    store: 'local' | 's3';
    /** Where the new server finds them. */
    location: string;
    /** Files copied (s3) or found in place (local), and their bytes. */
    count: number;
    bytes: number;
    /** Knowledge files whose stored file is not under DATA_DIR/storage (a delete interrupted halfway, say). */
    missing: MissingFile[];
  };
}

export interface MigrateOptions {
  /** The target's postgres:// URL (--to). */
  to: string;
  /** Where `to` came from, for messages: `--to` (default), MIGRATE_TO_URL, standard input. */
  toSource?: string;
  /** Progress lines for a person (not with --json). */
  progress?(line: string): void;
  batches?: Partial<MigrationBatches>;
}

/**
 * What went wrong, for an error message: the innermost cause (Drizzle's "Failed query" wraps
 * PostgreSQL's error, and quotes every value of the batch), with PostgreSQL's detail; what
 * each address said for a connection refused on all of them.
 */
function reason(error: unknown): string {
  if (error instanceof AggregateError && !error.message) return error.errors.map(reason).join('; ');
  if (!(error instanceof Error)) return String(error);
  if (error instanceof DrizzleQueryError && error.cause) return reason(error.cause);
  const { code, detail } = error as { code?: string; detail?: string };
  return `${error.message || code || error.name}${detail ? ` (${detail})` : ''}`;
}

/** The target URL checked: a postgres:// or postgresql:// URL. */
export function targetUrl(to: string | undefined, source = '--to'): string {
  const value = to?.trim();
  if (!value) {
    throw new MigrationError(
      'migrate-to-postgres needs --to postgres://user:password@host:5432/database (or, to keep the password from ps: MIGRATE_TO_URL, or --to - with the URL on standard input)',
    );
  }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1]?.toLowerCase();
  if ((scheme !== 'postgres' && scheme !== 'postgresql') || !URL.canParse(value)) {
    throw new MigrationError(
      `${source} must be a postgres:// or postgresql:// URL, got "${maskDatabaseUrl(value)}" (percent-encode special characters of the password)`,
    );
  }
  return value;
}

/** Whether `value` (a column's value, JSON included) holds U+0000, which PostgreSQL's text and jsonb refuse. */
function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(holdsNul);
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    return Object.entries(value).some(([key, item]) => key.includes('\u0000') || holdsNul(item));
  }
  return false;
}

/** About the size of a row in a query: its text and JSON (other values are short). */
function rowChars(values: readonly unknown[]): number {
  let chars = 16;
  for (const value of values) {
    if (typeof value === 'string') chars += value.length;
    else if (value !== null && typeof value === 'object' && !(value instanceof Date)) chars += JSON.stringify(value).length;
    else chars += 16;
  }
  return chars;
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

const describeKey = (copy: TableCopy, row: Record<string, unknown>) => copy.key.map((field) => `${field} ${String(row[field])}`).join(', ');

interface SourceRow {
  row: Record<string, unknown>;
  rowid: number;
}

/** A table's rows in rowid order, a batch at a time. */
function* readRows(source: Db, table: SQLiteTable, batch: number): Generator<SourceRow[]> {
  let last: number | null = null;
  for (;;) {
    let rows: (Record<string, unknown> & { __rowid: number })[];
    try {
      rows = source
        .select({ ...getTableColumns(table), __rowid: sql<number>`rowid` })
        .from(table)
        .where(last === null ? undefined : sql`rowid > ${last}`)
        .orderBy(sql`rowid`)
        .limit(batch)
        .all() as typeof rows;
    } catch (error) {
      // A value its column cannot hold (JSON that does not parse, say), written behind the service's back.
      const where = last === null ? 'its first rows' : `the rows after rowid ${last}`;
      throw new MigrationError(`Reading ${getTableName(table)} from SQLite failed, in ${where}: ${reason(error)}`, { cause: error });
    }
    if (rows.length === 0) return;
    last = rows[rows.length - 1]!.__rowid;
    yield rows.map(({ __rowid, ...row }) => ({ row, rowid: __rowid }));
  }
}

/** The columns PostgreSQL takes values for: all but the generated ones (search_vector). */
function writableColumns(table: PgTable): [string, PgColumn][] {
  return Object.entries(getTableColumns(table)).filter(([, column]) => !column.generated);
}

const count = async (db: PgExecutor, name: string) => {
  const result = await db.execute<{ n: string }>(sql`select count(*) as n from ${sql.identifier(name)}`);
  return Number(result.rows[0]!.n);
};

/** Refuses a target that holds rows already in any table the migration fills, naming them. */
async function refuseNonEmpty(db: PgExecutor, masked: string): Promise<void> {
  const found: string[] = [];
  for (const copy of COPIED_TABLES) {
    const name = getTableName(copy.pg);
    const result = await db.execute(sql`select 1 from ${sql.identifier(name)} limit 1`);
    if (result.rows.length) found.push(`${name} (${plural(await count(db, name), 'row')})`);
  }
  if (found.length) {
    throw new MigrationError(
      `The PostgreSQL database at ${masked} is not empty: ${found.join(', ')}. migrate-to-postgres only copies into an empty database (a server started on it creates a site): use a new database`,
    );
  }
}

interface KnowledgeFileRef extends MissingFile {
  sizeBytes: number;
}

/** Every stored file of an image (its original and variants), as the files to copy. */
function storedImageFiles(row: MediaRow): KnowledgeFileRef[] {
  return [{ file: row.file, sizeBytes: 0 }, ...row.variants].map((stored) => ({ id: row.id, siteId: row.siteId, storageKey: mediaKey(row.siteId, row.id, stored.file), sizeBytes: stored.sizeBytes }));
}

/** Copies one table; answers the rows copied. Rows PostgreSQL cannot store are added to `problems`, and stop the inserts. */
async function copyTable(
  source: Db,
  tx: PgExecutor,
  copy: TableCopy,
  problems: string[],
  onRow: (row: Record<string, unknown>) => void,
  batches: MigrationBatches,
): Promise<number> {
  const name = getTableName(copy.pg);
  const columns = writableColumns(copy.pg);
  const liteColumns = getTableColumns(copy.sqlite);
  for (const [field] of columns) {
    /* c8 ignore next: the schemas are twins (test/admin/migrate.test.ts compares their rows) */
    if (!(field in liteColumns)) throw new Error(`${name}.${field} has no SQLite twin: the migration does not know this schema`);
  }
  const names = [...columns.map(([, column]) => column.name), ...(copy.identity === 'rowid' ? ['rowid'] : [])];
  const perInsert = Math.max(1, Math.floor(batches.insertParameters / names.length));
  let copied = 0;

  const insert = async (rows: SQL[], first: Record<string, unknown>, last: Record<string, unknown>) => {
    const statement = sql`insert into ${sql.identifier(name)} (${sql.join(
      names.map((column) => sql.identifier(column)),
      sql`, `,
    )}) values ${sql.join(rows, sql`, `)}`;
    try {
      await tx.execute(statement);
    } catch (error) {
      const range = rows.length === 1 ? describeKey(copy, first) : `${describeKey(copy, first)} … ${describeKey(copy, last)}`;
      throw new MigrationError(`PostgreSQL refused rows of ${name} (${range}): ${reason(error)}`, { cause: error });
    }
  };

  for (const batch of readRows(source, copy.sqlite, batches.readRows)) {
    let pending: SQL[] = [];
    let chars = 0;
    let first: Record<string, unknown> | null = null;
    let last: Record<string, unknown> | null = null;
    for (const { row, rowid } of batch) {
      onRow(row);
      const bad = columns.filter(([field]) => holdsNul(row[field])).map(([, column]) => column.name);
      if (bad.length) {
        problems.push(`${name} row ${describeKey(copy, row)}: ${bad.join(', ')} ${bad.length > 1 ? 'hold' : 'holds'} U+0000 (a NUL character)`);
      }
      if (problems.length) continue; // nothing more is written; the rest is only checked
      const values = columns.map(([field]) => row[field] ?? null);
      const params = values.map((value, i) => sql.param(value, columns[i]![1]));
      if (copy.identity === 'rowid') params.push(sql.param(rowid));
      const size = rowChars(values);
      if (pending.length && (pending.length >= perInsert || chars + size > batches.insertChars)) {
        await insert(pending, first!, last!);
        copied += pending.length;
        pending = [];
        chars = 0;
        first = null;
      }
      pending.push(sql`(${sql.join(params, sql`, `)})`);
      chars += size;
      first ??= row;
      last = row;
    }
    if (pending.length && !problems.length) {
      await insert(pending, first!, last!);
      copied += pending.length;
    }
  }
  return copied;
}

/** Moves an identity column's sequence past the copied values (and past SQLite's AUTOINCREMENT high-water mark). */
async function continueSequence(source: Db, tx: PgExecutor, copy: TableCopy): Promise<void> {
  const name = getTableName(copy.pg);
  const column = copy.identity!;
  let floor = 0;
  if (column === 'id') {
    // AUTOINCREMENT never hands out an id again, even one whose row is gone: neither shall PostgreSQL.
    const seq = source.get<{ seq: number } | undefined>(sql`select seq from sqlite_sequence where name = ${name}`);
    floor = seq?.seq ?? 0;
  }
  await tx.execute(
    sql`select setval(pg_get_serial_sequence(${`"${name}"`}, ${column}), greatest(coalesce(max(${sql.identifier(column)}), 0), ${floor}) + 1, false) from ${sql.identifier(name)}`,
  );
}

/** Where a store keeps files, for the report: a folder, or a bucket and prefix. */
function whereStored(store: StoreDescription): string {
  if (store.kind === 'local') return store.path;
  return `S3 bucket "${store.bucket}"${store.prefix ? ` under ${store.prefix}/` : ''}${store.endpoint ? ` at ${redactUrl(store.endpoint)}` : ''}`;
}

/** Copies each file from DATA_DIR/storage to `store`, a few at a time; answers the bytes copied. */
async function uploadFiles(
  local: FileStorage,
  store: ObjectStore,
  files: readonly KnowledgeFileRef[],
  progress: (line: string) => void,
  batches: MigrationBatches,
): Promise<number> {
  let bytes = 0;
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++]!;
      try {
        const received = await store.receive(fs.createReadStream(local.pathOf(file.storageKey)));
        await store.commit(received.tmpPath, file.storageKey);
        bytes += received.size;
      } catch (error) {
        throw new MigrationError(`Copying stored file ${file.storageKey} to the store failed: ${reason(error)}`, { cause: error });
      }
      done++;
      if (done % batches.filesPerProgressLine === 0) progress(`  ${done} of ${files.length} files copied`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(batches.uploads, files.length) }, worker));
  return bytes;
}

/**
 * Copies the SQLite database of `config` (DATA_DIR's, or the file DATABASE_URL names) into the
 * empty PostgreSQL database at `options.to`, in one transaction, and with STORAGE_URL set its
 * knowledge files into that store before committing. Refuses while a server holds DATA_DIR.
 */
export async function migrateToPostgres(config: Config, options: MigrateOptions): Promise<MigrationReport> {
  const progress = options.progress ?? (() => {});
  const batches = { ...DEFAULT_BATCHES, ...options.batches };
  const url = targetUrl(options.to, options.toSource);
  const masked = maskDatabaseUrl(url);
  const file = databaseFile(config.dataDir, config.database.kind === 'sqlite' ? config.database.path : null);
  if (!fs.existsSync(file)) throw new MigrationError(`No SQLite database at ${file}: run this with the DATA_DIR (or DATABASE_URL) the SQLite server used`);

  let unlock: () => void;
  try {
    unlock = lockDataDir(config.dataDir, `blog-admin migrate-to-postgres (pid ${process.pid})`);
  } catch (error) {
    if (!(error instanceof DataDirLockedError)) throw error;
    throw new MigrationError(`${error.message.replace(/; stop it first.*$/, '')}: stop it before migrating, so that nothing changes while it copies`);
  }
  const source = openDatabase(config.dataDir, { file });
  let target: PostgresHandle | null = null;
  let store: ObjectStore | null = null;
  try {
    try {
      target = await openPostgres(url, { poolMax: 2 });
    } catch (error) {
      throw new MigrationError(`Cannot use the PostgreSQL database at ${masked}: ${reason(error)}`, { cause: error });
    }
    // Checked before anything else is done, and again under lock once copying.
    await refuseNonEmpty(target.db, masked);
    if (config.storage.kind === 's3') {
      store = await createObjectStore(config);
      try {
        await store.open();
      } catch (error) {
        throw new MigrationError(reason(error), { cause: error });
      }
    }
    const local = new FileStorage(config.dataDir);
    progress(`Copying the SQLite database ${file} to PostgreSQL at ${masked}`);

    // One read transaction: every table is read from the same snapshot.
    source.db.run(sql`begin`);
    try {
      const opened = target; // (not null here; the callback would not know it)
      const result = await opened.transaction(async (tx) => {
        // Nothing else writes these tables until the copy commits (a server starting on the
        // database meanwhile waits, then finds its sites there); readers are not held up.
        const names = COPIED_TABLES.map((copy) => sql.identifier(getTableName(copy.pg)));
        await tx.execute(sql`lock table ${sql.join(names, sql`, `)} in exclusive mode`);
        await refuseNonEmpty(tx, masked);
        const tables: TableCount[] = [];
        const problems: string[] = [];
        const files: KnowledgeFileRef[] = [];
        let running = 0;
        for (const copy of COPIED_TABLES) {
          const name = getTableName(copy.pg);
          const onRow =
            copy.pg === pg.knowledgeFiles
              ? (row: Record<string, unknown>) => files.push(row as unknown as KnowledgeFileRef)
              : copy.pg === pg.media
                ? (row: Record<string, unknown>) => files.push(...storedImageFiles(row as unknown as MediaRow))
              : copy.pg === pg.jobs
                ? (row: Record<string, unknown>) => void (row.status === 'running' && running++)
                : () => {};
          const copied = await copyTable(source.db, tx, copy, problems, onRow, batches);
          if (problems.length) continue;
          if (copy.identity) await continueSequence(source.db, tx, copy);
          const sqliteCount = source.db.get<{ n: number }>(sql`select count(*) as n from ${sql.identifier(name)}`).n;
          tables.push({ table: name, sqlite: sqliteCount, postgres: await count(tx, name) });
          if (copied) progress(`  ${name}: ${plural(copied, 'row')}`);
        }
        if (problems.length) {
          const listed = problems.slice(0, MAX_LISTED_PROBLEMS).map((problem) => `  ${problem}`);
          if (problems.length > MAX_LISTED_PROBLEMS) listed.push(`  and ${problems.length - MAX_LISTED_PROBLEMS} more`);
          throw new MigrationError(
            `Nothing was copied: PostgreSQL cannot store U+0000 (NUL) in text, and ${problems.length === 1 ? 'a row holds' : `${problems.length} rows hold`} it:\n${listed.join('\n')}\nRemove those characters in the SQLite site (edit the posts, delete the files), then run this again.`,
          );
        }
        const wrong = tables.filter((entry) => entry.sqlite !== entry.postgres);
        /* c8 ignore next 3: a safety net; every row read is written or refused above */
        if (wrong.length) {
          throw new MigrationError(`Nothing was copied: the counts differ after copying (${wrong.map((w) => `${w.table}: ${w.sqlite} in SQLite, ${w.postgres} in PostgreSQL`).join('; ')})`);
        }

        // As the old server's next start would have: jobs it left running go back to pending
        // (or fail, with no attempt left). Kept running, they would wait for their leases to
        // run out; released, they run as soon as an instance polls.
        const interruptedJobs = running ? await postgresStepDatabase(opened, postgresAdapters).runIn(tx, releaseSteps({}, Date.now(), null, INTERRUPTED)) : 0;

        const present: KnowledgeFileRef[] = [];
        const missing: MissingFile[] = [];
        let bytes = 0;
        for (const ref of files) {
          const stat = await fs.promises.stat(local.pathOf(ref.storageKey)).catch(() => null);
          if (stat?.isFile()) {
            present.push(ref);
            bytes += stat.size;
          } else missing.push({ id: ref.id, siteId: ref.siteId, storageKey: ref.storageKey });
        }
        if (store && present.length) {
          progress(`Copying ${plural(present.length, 'stored file')} (knowledge files and images, ${formatSize(bytes)}) to the store`);
          bytes = await uploadFiles(local, store, present, progress, batches);
        }
        return {
          tables,
          interruptedJobs,
          files: {
            store: store ? ('s3' as const) : ('local' as const),
            location: whereStored((store ?? local).description),
            count: present.length,
            bytes,
            missing,
          },
        };
      });
      // Statistics and the search index's pending entries now, not when autovacuum comes by: until
      // then a deep list page sorts every post and search reads every chunk.
      progress('Analysing the copied tables');
      await target.db.execute(sql`vacuum analyze`);
      return { source: { kind: 'sqlite', file }, target: { kind: 'postgres', url: masked }, ...result };
    } finally {
      source.db.run(sql`rollback`);
    }
  } finally {
    await store?.close();
    await target?.close();
    source.close();
    unlock();
  }
}

/** The report as a person reads it (after the progress lines). */
export function reportLines(report: MigrationReport, table: (headers: string[], rows: string[][]) => string[]): string[] {
  const lines = [''];
  lines.push(...table(['TABLE', 'SQLITE', 'POSTGRESQL'], report.tables.map((entry) => [entry.table, String(entry.sqlite), String(entry.postgres)])));
  lines.push('', `Every table has as many rows in PostgreSQL (${report.target.url}) as in SQLite (${report.source.file}).`);
  if (report.interruptedJobs) {
    const jobs = report.interruptedJobs;
    lines.push(`${plural(jobs, 'job')} the old server left running ${jobs === 1 ? 'was' : 'were'} released, as its next start would have done: pending again (or failed, if no attempt was left).`);
  }
  const { files } = report;
  if (files.count === 0) {
    lines.push('Stored files (knowledge files and images): none to copy.');
  } else if (files.store === 's3') {
    lines.push(`Stored files (knowledge files and images): ${files.count} (${formatSize(files.bytes)}) copied to ${files.location}.`);
  } else {
    lines.push(
      `Stored files (knowledge files and images): ${files.count} (${formatSize(files.bytes)}) stay on local disk in ${files.location}: the new server must use this same DATA_DIR, which only works on one machine. To share them between instances, set STORAGE_URL when migrating.`,
    );
  }
  if (files.missing.length) {
    const missing = files.missing.length;
    lines.push(
      `${plural(missing, 'knowledge file')} ${missing === 1 ? 'has' : 'have'} no stored file in DATA_DIR/storage (a delete interrupted halfway, say): copied as ${missing === 1 ? 'it is' : 'they are'}; delete ${missing === 1 ? 'it' : 'them'} through the API.`,
    );
    for (const file of files.missing) lines.push(`  ${file.id} of site ${file.siteId} (${file.storageKey})`);
  }
  lines.push('', `Migration complete. Start the server with DATABASE_URL set to that PostgreSQL database${files.store === 's3' ? ' and the same STORAGE_URL' : ''}.`);
  return lines;
}
