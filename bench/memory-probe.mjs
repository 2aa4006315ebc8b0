// Preloaded into a benchmark's server (NODE_OPTIONS=--import): on SIGUSR2 it runs a full garbage
// collection and writes what stays alive after it, one line on stderr:
//   memory-probe {"liveHeapMb":..,"rssMb":..,"youngMb":..}
// (youngMb: the young generation's pages, which V8 grows with the rate of allocation)
// A server's RSS says little about what it keeps: V8 sizes its heap to the garbage it makes and
// rarely gives pages back. The heap alive after a full collection is what grows with a leak.
// It changes nothing else in the server (a signal handler, and gc() made callable for it).
//
// With MEMORY_PROBE_DIR set it also appends process.memoryUsage()'s parts (MB) to
// <dir>/<pid>.jsonl every MEMORY_PROBE_EVERY_MS (default 60 s), without collecting, so a long run
// can tell which part grows: {"t":..,"rss":..,"heapTotal":..,"young":..,"heapUsed":..,"external":..,"arrayBuffers":..}
// (young: the new spaces' part of heapTotal)
// and after each SIGUSR2 the same with "liveHeap" (heapUsed right after the full collection).
// A worker thread (it preloads the probe too) writes <pid>.worker<threadId>.jsonl: its own heap
// (rss is the whole process's). Children inherit NODE_OPTIONS and write files of their own.

import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { isMainThread, threadId } from 'node:worker_threads';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const mb = (bytes) => Math.round((bytes / 1048576) * 10) / 10;

/** The young generation's (the new spaces') `size` in MB: space_size, or physical_space_size for its pages. */
const youngMb = (size) => mb(v8.getHeapSpaceStatistics().filter((space) => space.space_name.startsWith('new_')).reduce((sum, space) => sum + space[size], 0));

const dir = process.env.MEMORY_PROBE_DIR;
const record = (extra = {}) => {
  if (!dir) return;
  const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
  // The young generation's share of heapTotal: V8 grows it with the rate of allocation.
  const line = { t: Date.now(), rss: mb(rss), heapTotal: mb(heapTotal), young: youngMb('space_size'), heapUsed: mb(heapUsed), external: mb(external), arrayBuffers: mb(arrayBuffers), ...extra };
  try {
    fs.appendFileSync(path.join(dir, `${process.pid}${isMainThread ? '' : `.worker${threadId}`}.jsonl`), `${JSON.stringify(line)}\n`);
  } catch {
    // the bench removed its directory: nothing to report to
  }
};
if (dir) setInterval(record, Number(process.env.MEMORY_PROBE_EVERY_MS) || 60_000).unref();

process.on('SIGUSR2', () => {
  // Twice: what the first collection's finalizers free goes in the second.
  gc();
  gc();
  const { heapUsed, rss } = process.memoryUsage();
  process.stderr.write(`memory-probe ${JSON.stringify({ liveHeapMb: mb(heapUsed), rssMb: mb(rss), youngMb: youngMb('physical_space_size') })}\n`);
  record({ liveHeap: mb(heapUsed) });
});
