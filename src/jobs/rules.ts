import { randomUUID } from 'node:crypto';
import type { Column, SQL } from 'drizzle-orm';
import type { JobRow } from '../db/schema.js';
import type { JobStatus } from '../limits.js';
import { and, eq, inArray, notInArray } from '../db/orm.js';

/*
 * The types of the job queue's API and the rules that need no database. A job row has the
 * same TypeScript type on both databases (see pg-schema.ts).
 */

export type { JobRow };

/** A job as its kind's handler sees it: the payload in the shape that kind gave it. */
export type Job<Payload> = Omit<JobRow, 'payload'> & { payload: Payload };

export interface NewJob {
  kind: string;
  /** Stored as JSON. */
  payload: unknown;
  /** When the job is first due. */
  scheduledFor: Date;
  /** Jobs submitted together (a batch) share a group and keep their order in it. */
  groupId?: string | null;
  position?: number;
}

export interface JobListQuery {
  page: number;
  limit: number;
  groupId?: string;
  status?: JobStatus;
}

/**
 * The kinds a queue claims and releases: all of them by default; `only` some (a loop of their
 * own, with its own concurrency, such as webhook deliveries) or all `except` some (the loop
 * that leaves those to theirs). Everything else a queue does works on every kind alike.
 */
export interface JobScope {
  only?: readonly string[];
  except?: readonly string[];
}

/** The condition on a job's kind that keeps a queue to its scope; none when it takes every kind (for the adapters). */
export function kindInScope(kind: Column, scope: JobScope): SQL | undefined {
  if (scope.only) return inArray(kind, [...scope.only]);
  return scope.except?.length ? notInArray(kind, [...scope.except]) : undefined;
}

// A running job's lease is released together with any change to its state (for the adapters).
export const noLease = { leaseOwner: null, leaseUntil: null };

/** A list of a site's jobs of one kind, maybe of one group or status. */
export interface JobFilter {
  siteId: string;
  kind: string;
  groupId?: string;
  status?: JobStatus;
}

/** The pending jobs of one site, kind and group (for the adapters). */
export const pendingOfGroup = (jobs: { siteId: Column; kind: Column; groupId: Column; status: Column }, siteId: string, kind: string, groupId: string) =>
  and(eq(jobs.siteId, siteId), eq(jobs.kind, kind), eq(jobs.groupId, groupId), eq(jobs.status, 'pending'));

/** The rows of newly enqueued jobs: pending, due at their scheduled time, no attempt made. */
export function newJobRows(siteId: string, items: readonly NewJob[], maxAttempts: number, now: Date): JobRow[] {
  return items.map((item, index) => ({
    id: randomUUID(),
    kind: item.kind,
    siteId,
    groupId: item.groupId ?? null,
    position: item.position ?? index,
    payload: item.payload,
    status: 'pending',
    scheduledFor: item.scheduledFor,
    runAfter: item.scheduledFor,
    attempts: 0,
    maxAttempts,
    waits: 0,
    leaseOwner: null,
    leaseUntil: null,
    startedAt: null,
    finishedAt: null,
    lastError: null,
    result: null,
    createdAt: now,
    updatedAt: now,
  }));
}

/** The order jobs are claimed in: oldest due first, then oldest submitted, then a batch's own order. */
export function byClaimOrder(a: JobRow, b: JobRow): number {
  return a.runAfter.getTime() - b.runAfter.getTime() || a.createdAt.getTime() - b.createdAt.getTime() || a.position - b.position;
}

/** Whether a failed attempt ends the job for good rather than being retried. */
export function isFinalFailure(job: Pick<JobRow, 'attempts' | 'maxAttempts'>, permanent: boolean): boolean {
  return permanent || job.attempts >= job.maxAttempts;
}

/** What a job whose lease expired with no attempts left records as its error. */
export const noAttemptsLeft = (reason: string) => `${reason}; no attempts left`;
