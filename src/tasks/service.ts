import { randomUUID } from 'node:crypto';
import type { AppGenerator } from '../generation/service.js';
import type { KnowledgeService } from '../knowledge/service.js';
import type { JobStatus } from '../limits.js';
import type { Page } from '../pagination.js';
import type { Job, JobQueue, JobRow } from '../jobs/store.js';
import { unknownImage } from '../media/rules.js';
import type { MediaService } from '../media/service.js';
import { planBatch, requestedFileIds, requestedImages, type BatchRequest } from './batch.js';
import { GENERATE_POST, type GeneratePostPayload, type GeneratePostResult } from './generate-post.js';

/** A batch task as the API shows it. */
export interface Task {
  id: string;
  batchId: string;
  status: JobStatus;
  topic: string;
  scheduledFor: Date;
  attempts: number;
  maxAttempts: number;
  startedAt: Date | null;
  finishedAt: Date | null;
  lastError: string | null;
  postId: string | null;
  missingFileIds: string[];
  notes: string[];
  outline: boolean;
  keptAsDraft: boolean;
  createdAt: Date;
}

/** A `generate-post` job as the API shows it (also in webhook payloads). */
export function toTask(row: JobRow): Task {
  const { payload, result } = row as Job<GeneratePostPayload> & { result: GeneratePostResult | null };
  return {
    id: row.id,
    batchId: row.groupId ?? row.id,
    status: row.status,
    topic: payload.topic,
    scheduledFor: row.scheduledFor,
    attempts: row.attempts,
    maxAttempts: row.maxAttempts,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    lastError: row.lastError,
    postId: result?.postId ?? null,
    missingFileIds: result?.missingFileIds ?? [],
    notes: result?.notes ?? [],
    outline: result?.outline ?? false,
    keptAsDraft: result?.keptAsDraft ?? false,
    createdAt: row.createdAt,
  };
}

/** Batches of generated posts: each post is a job of kind `generate-post` in the queue. */
export class TaskService {
  constructor(
    private readonly queue: JobQueue,
    private readonly knowledge: Pick<KnowledgeService, 'existingIds'>,
    private readonly generator: Pick<AppGenerator, 'checkModel'>,
    private readonly maxAttempts: number,
    private readonly media: Pick<MediaService, 'existingIds'>,
  ) {}

  /** Checks a batch and writes its tasks in one transaction, all or none. */
  async schedule(siteId: string, request: BatchRequest, now = new Date()): Promise<{ batchId: string; tasks: Task[] }> {
    const known = await this.knowledge.existingIds(siteId, requestedFileIds(request));
    const planned = planBatch(request, known, now);
    const images = requestedImages(request);
    const existing = await this.media.existingIds(siteId, [...images.keys()]);
    for (const [id, path] of images) if (!existing.has(id)) throw unknownImage(id, path);
    // A model the generator answers it lacks is refused now, not after every task failed.
    const models = new Set(planned.map(({ params }) => params.model?.trim()).filter((model): model is string => !!model));
    for (const model of models) await this.generator.checkModel?.(model);
    const batchId = randomUUID();
    const rows = await this.queue.enqueue(
      siteId,
      planned.map(({ topic, params, scheduledFor }, position) => ({
        kind: GENERATE_POST,
        payload: { topic, params } satisfies GeneratePostPayload,
        scheduledFor,
        groupId: batchId,
        position,
      })),
      this.maxAttempts,
      now,
    );
    return { batchId, tasks: rows.map(toTask) };
  }

  async get(siteId: string, taskId: string): Promise<Task> {
    return toTask(await this.queue.get(siteId, GENERATE_POST, taskId));
  }

  async list(siteId: string, query: { page: number; limit: number; batchId?: string; status?: JobStatus }): Promise<Page<Task>> {
    const page = await this.queue.list(siteId, GENERATE_POST, { page: query.page, limit: query.limit, groupId: query.batchId, status: query.status });
    return { items: page.items.map(toTask), pagination: page.pagination };
  }

  /** Cancels a pending task; anything else is a 409. */
  async cancel(siteId: string, taskId: string): Promise<Task> {
    return toTask(await this.queue.cancel(siteId, GENERATE_POST, taskId));
  }
}
