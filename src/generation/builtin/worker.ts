/**
 * A thread of the builtin composer's pool (see pool.ts): composes the posts it is sent, one at
 * a time, and answers each with its result or its error's message.
 */
import fs from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { GenerationRequest } from '../types.js';
import { BuiltinGenerator } from './index.js';

// The pool's niceness for this thread (see COMPOSER_NICENESS). Linux sets it per thread, named by
// its thread id; elsewhere the thread keeps the process's priority.
try {
  os.setPriority(Number(fs.readlinkSync('/proc/thread-self').split('/').pop()), (workerData as { niceness: number }).niceness);
} catch {
  // No /proc/thread-self (not Linux), or not permitted: normal priority.
}

const generator = new BuiltinGenerator();

parentPort!.on('message', async ({ id, request }: { id: number; request: GenerationRequest }) => {
  try {
    parentPort!.postMessage({ id, result: await generator.generate(request) });
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
