/**
 * A thread of the builtin composer's pool (see pool.ts): composes the posts it is sent, one at
 * a time, and answers each with its result or its error's message.
 */
import { parentPort } from 'node:worker_threads';
import type { GenerationRequest } from '../types.js';
import { BuiltinGenerator } from './index.js';

const generator = new BuiltinGenerator();

parentPort!.on('message', async ({ id, request }: { id: number; request: GenerationRequest }) => {
  try {
    parentPort!.postMessage({ id, result: await generator.generate(request) });
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
