// Preloaded into a benchmark's server (NODE_OPTIONS=--import): on SIGUSR2 it runs a full garbage
// collection and writes what stays alive after it, one line on stderr:
//   memory-probe {"liveHeapMb":..,"rssMb":..}
// A server's RSS says little about what it keeps: V8 sizes its heap to the garbage it makes and
// rarely gives pages back. The heap alive after a full collection is what grows with a leak.
// It changes nothing else in the server (a signal handler, and gc() made callable for it).

import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const mb = (bytes) => Math.round((bytes / 1048576) * 10) / 10;

process.on('SIGUSR2', () => {
  // Twice: what the first collection's finalizers free goes in the second.
  gc();
  gc();
  const { heapUsed, rss } = process.memoryUsage();
  process.stderr.write(`memory-probe ${JSON.stringify({ liveHeapMb: mb(heapUsed), rssMb: mb(rss) })}\n`);
});
