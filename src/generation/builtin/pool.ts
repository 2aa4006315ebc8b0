import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { GenerationRequest, GenerationResult, Generator } from '../types.js';
import { BUILTIN_MODEL } from './index.js';

const WORKER_FILE = new URL(`./worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/**
 * Composing is the bulk of a batch's CPU: its threads yield the cores to the event loop (and the
 * database) answering requests, so that a batch slows readers less.
 */
export const COMPOSER_NICENESS = 10;

interface Task {
  id: number;
  request: GenerationRequest;
  resolve(result: GenerationResult): void;
  reject(error: Error): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

interface Thread {
  worker: Worker;
  task: Task | null;
}

/**
 * The builtin composer on worker threads. Composing a post is ~15 ms of CPU (language analysis
 * of every passage); on the event loop, a batch of due tasks held up every request meanwhile
 * and used one core. Threads start on first use (each loads the language model, ~56 MB) and
 * take one post at a time; posts wait in order for a free thread. The output is the same
 * composer's, byte for byte.
 */
export class BuiltinWorkerPool implements Generator {
  readonly provider = 'builtin' as const;
  readonly model = BUILTIN_MODEL;
  private readonly threads: Thread[] = [];
  private readonly waiting: Task[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly size: number) {}

  generate(request: GenerationRequest, signal?: AbortSignal): Promise<GenerationResult> {
    if (this.closed) return Promise.reject(new Error('The builtin composer is shut down'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const task: Task = { id: this.nextId++, request, resolve, reject, signal };
      if (signal) {
        // A cancelled post stops waiting at once; one already composing finishes unseen.
        task.onAbort = () => {
          const queued = this.waiting.indexOf(task);
          if (queued >= 0) this.waiting.splice(queued, 1);
          this.settle(task, () => reject(signal.reason instanceof Error ? signal.reason : new Error('Generation cancelled')));
        };
        signal.addEventListener('abort', task.onAbort, { once: true });
      }
      this.waiting.push(task);
      this.dispatch();
    });
  }

  /** Stops the threads; posts waiting or composing are refused. */
  async close(): Promise<void> {
    this.closed = true;
    const shutDown = () => new Error('The builtin composer is shut down');
    for (const task of this.waiting.splice(0)) this.settle(task, () => task.reject(shutDown()));
    const threads = this.threads.splice(0);
    for (const { task } of threads) if (task) this.settle(task, () => task.reject(shutDown()));
    await Promise.all(threads.map(({ worker }) => worker.terminate()));
  }

  private dispatch(): void {
    while (this.waiting.length) {
      const thread = this.threads.find((candidate) => candidate.task === null) ?? this.spawn();
      if (!thread) return;
      const task = this.waiting.shift()!;
      thread.task = task;
      thread.worker.postMessage({ id: task.id, request: task.request });
    }
  }

  private spawn(): Thread | null {
    if (this.threads.length >= this.size) return null;
    const thread: Thread = { worker: new Worker(WORKER_FILE, { workerData: { niceness: COMPOSER_NICENESS } }), task: null };
    thread.worker.unref();
    thread.worker.on('message', (message: { id: number; result?: GenerationResult; error?: string }) => {
      const task = thread.task;
      thread.task = null;
      if (task && task.id === message.id) {
        this.settle(task, () => (message.error === undefined ? task.resolve(message.result!) : task.reject(new Error(message.error))));
      }
      this.dispatch();
    });
    // A thread that dies takes its post with it; the next post starts a new thread.
    thread.worker.on('error', (error) => {
      this.threads.splice(this.threads.indexOf(thread), 1);
      if (thread.task) this.settle(thread.task, () => thread.task!.reject(error));
      this.dispatch();
    });
    this.threads.push(thread);
    return thread;
  }

  private settle(task: Task, finish: () => void): void {
    if (task.onAbort) task.signal!.removeEventListener('abort', task.onAbort);
    task.onAbort = undefined;
    finish();
  }
}
