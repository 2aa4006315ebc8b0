import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { EXTRACTOR_MEMORY_MB } from '../limits.js';
import type { KnowledgeExtension } from './detect.js';
import { DEADLINE_ENV, ExtractionError, PARENT_PID_ENV, type ExtractionJob, type ExtractionOutcome } from './extractor-protocol.js';

const DEFAULT_TIMEOUT_MS = 60_000;
/** The extractor's own deadline comes this long after the one this process enforces. */
const DEADLINE_MARGIN_MS = 5000;
/**
 * Where the extractor's CPU time can be read (Linux), `timeoutMs` is processing time: on a busy
 * machine a niced extractor may wait minutes for the CPU, and a file must not fail for that.
 * Wall time then only stops an extractor that waits on nothing: this many times the budget, and
 * 10 minutes at least.
 */
const WALL_FACTOR = 10;
const WALL_MIN_MS = 600_000;
const CPU_POLL_MS = 250;
/** Linux's clock ticks per second (sysconf(_SC_CLK_TCK)), the unit of /proc/<pid>/stat's times. */
const CLOCK_TICKS = 100;

/** Whether a process's CPU time can be read here (Linux's /proc): looked at once. */
const CPU_TIME_READABLE = process.platform === 'linux' && fs.existsSync('/proc/self/stat');

/** A process's CPU time so far (user + system) in ms, from /proc; null where that cannot be read. */
function cpuMsOf(pid: number | undefined): number | null {
  if (pid === undefined || !CPU_TIME_READABLE) return null;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    // Fields after the parenthesised name, from the 3rd (state): utime is the 14th, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** The V8 heap's share of the extractor's memory; buffers and native memory get the rest. */
const EXTRACTOR_HEAP_MB = 1024;

/** Indexing is background work: the extractor yields the CPU to the server answering requests. */
const EXTRACTOR_NICENESS = 10;

const OWN_EXTENSION = path.extname(fileURLToPath(import.meta.url));

/**
 * Running from source, a compiled extractor to start instead of the one beside this module, with
 * plain node (the tests name the one they build first: test/helpers/built-children.mjs). Through
 * the TypeScript loader an extractor took 2.7 s to start here, against 0.45 s compiled. A
 * compiled service (production, and the servers tests start) ignores it: its own is compiled.
 */
const COMPILED_EXTRACTOR = OWN_EXTENSION === '.ts' ? process.env.EXTRACTOR_SCRIPT || null : null;

// Beside this module: `.ts` when running from source (tap's TypeScript loader reaches the child
// through the inherited execArgv), `.js` once compiled to dist/.
export const EXTRACTOR_PATH = COMPILED_EXTRACTOR ?? fileURLToPath(new URL(`./extract-worker${OWN_EXTENSION}`, import.meta.url));

/** This process's node options go to an extractor of its own kind; a compiled one needs no loader. */
const EXTRACTOR_NODE_OPTIONS = COMPILED_EXTRACTOR ? [] : process.execArgv;

export interface ExtractorOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Most text taken from the file, in UTF-8 bytes (MAX_EXTRACTED_TEXT_MB). */
  maxTextBytes?: number;
  /** The extractor's memory in MB: its data-segment limit (RLIMIT_DATA) beyond V8's code ranges. */
  memoryMb?: number;
}

/** Isolates in an extractor: its own and its watchdog thread's (extract-worker.ts). */
const EXTRACTOR_ISOLATES = 2;

/**
 * The code range V8 maps for each isolate before it runs anything, in MB, where RLIMIT_DATA
 * counts it: Node 24 maps it (512 MB) writable and executable up front, so a data limit below
 * about 1.1 GB stopped an extractor at startup, and 1536 MB left a file 420 of them. Read from
 * this process's own mappings (the same node binary): the largest anonymous private `rwx` one.
 * 0 where there is none (Node 20 reserves it inaccessible) or the mappings cannot be read.
 */
export function codeRangeMb(maps = readOwnMaps()): number {
  let largest = 0;
  for (const line of maps.split('\n')) {
    const [range, perms, , , inode, name] = line.trim().split(/\s+/);
    if (perms !== 'rwxp' || inode !== '0' || name || !range) continue;
    const [start, end] = range.split('-').map((hex) => Number.parseInt(hex, 16));
    largest = Math.max(largest, end! - start!);
  }
  return Math.ceil(largest / (1024 * 1024));
}

function readOwnMaps(): string {
  try {
    return process.platform === 'linux' ? fs.readFileSync('/proc/self/maps', 'utf8') : '';
  } catch {
    return '';
  }
}

/** The extractor's data-segment limit: the memory it is given plus what its isolates map first. */
const RESERVED_MB = EXTRACTOR_ISOLATES * codeRangeMb();

/** The POSIX shell that sets the extractor's limits; without one (Windows) it runs without them. */
const SHELL = process.platform !== 'win32' && fs.existsSync('/bin/sh') ? '/bin/sh' : null;

/**
 * util-linux's setpriv on Linux: `--pdeathsig KILL` has the kernel kill the extractor the moment
 * its parent dies, however busy the machine (the extractor's own watchdog needs CPU time that a
 * niced process on a loaded machine may not get for seconds). Without it, the watchdog alone.
 */
const SETPRIV = process.platform === 'linux' ? (['/usr/bin/setpriv', '/bin/setpriv'].find((file) => fs.existsSync(file)) ?? null) : null;

/**
 * The extractor process: node on the worker script, with resource limits set from outside by
 * the shell that execs it (POSIX). `ulimit -d` caps its data segment (heap, buffers and
 * native allocations: what a decompression bomb grows), `ulimit -t` its CPU seconds, a
 * backstop for a parse that never returns. The pid stays the extractor's own (exec), and on
 * Linux setpriv asks the kernel to SIGKILL it when this process dies.
 */
function startExtractor(timeoutMs: number, deadlineMs: number, memoryMb: number): ChildProcess {
  const node = [...EXTRACTOR_NODE_OPTIONS, `--max-old-space-size=${Math.min(EXTRACTOR_HEAP_MB, Math.max(64, memoryMb - 256))}`, EXTRACTOR_PATH];
  const options = {
    serialization: 'advanced' as const,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'] as ('ignore' | 'inherit' | 'ipc')[],
    // Who its parent is, and its deadline from its start: it checks both before loading anything slow.
    env: { ...process.env, [PARENT_PID_ENV]: String(process.pid), [DEADLINE_ENV]: String(deadlineMs) },
  };
  if (!SHELL) return spawn(process.execPath, node, options);
  const cpuSeconds = Math.ceil(timeoutMs / 1000) + 10;
  // Lowering a limit is always allowed; a shell without one of them still runs the extractor.
  const script = `ulimit -d ${(memoryMb + RESERVED_MB) * 1024} 2>/dev/null; ulimit -t ${cpuSeconds} 2>/dev/null; exec "$@"`;
  // setpriv runs as the extractor's pid too (exec), so the parent whose death counts is this process.
  const command = SETPRIV ? [SETPRIV, '--pdeathsig', 'KILL', '--', process.execPath, ...node] : [process.execPath, ...node];
  return spawn(SHELL, ['-c', script, 'extractor', ...command], options);
}

/**
 * extractText() then chunkText() in a short-lived child process: the index's chunks of a file,
 * computed off the event loop and at a lower CPU priority, so parsing a large PDF neither
 * blocks nor slows requests much. Every failure rejects with an ExtractionError: a bad file, an
 * extractor that crashed, ran out of memory or exited early, or one still busy after
 * `timeoutMs` or when `signal` aborts (it is then killed). The extractor also watches for
 * itself: it ends when this process dies or past its own deadline (extract-worker.ts).
 */
export async function extractChunksInWorker(filePath: string, ext: KnowledgeExtension, fileName: string, options: ExtractorOptions = {}): Promise<string[]> {
  return (await runExtractor(filePath, ext, fileName, options)).chunks;
}

/** extractChunksInWorker() with the extractor's peak memory (measurements, logs). */
export async function runExtractor(
  filePath: string,
  ext: KnowledgeExtension,
  fileName: string,
  { timeoutMs = DEFAULT_TIMEOUT_MS, signal, maxTextBytes, memoryMb = EXTRACTOR_MEMORY_MB }: ExtractorOptions = {},
): Promise<{ chunks: string[]; peakMemoryMb?: number }> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ExtractionError('Extraction cancelled'));
    // Processing time where it can be read (see WALL_FACTOR), else wall time.
    const wallMs = CPU_TIME_READABLE ? Math.max(timeoutMs * WALL_FACTOR, WALL_MIN_MS) : timeoutMs;
    const job: ExtractionJob = { filePath, ext, fileName, maxTextBytes, deadlineMs: wallMs + DEADLINE_MARGIN_MS };
    const child = startExtractor(timeoutMs, wallMs + DEADLINE_MARGIN_MS, memoryMb);
    let settled = false;
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(cpuWatch);
      // The signal outlives this extraction (it is the indexer's shutdown): leave it clean.
      signal?.removeEventListener('abort', cancel);
      child.kill('SIGKILL');
      finish();
    };
    const fail = (message: string, cause?: unknown, peakMemoryMb?: number) =>
      settle(() => reject(Object.assign(new ExtractionError(message, { cause }), { peakMemoryMb })));
    const cancel = () => fail('Extraction cancelled');

    const timer = setTimeout(() => fail(`Extraction took longer than ${wallMs / 1000} s`), wallMs);
    const cpuWatch = CPU_TIME_READABLE
      ? setInterval(() => {
          const used = cpuMsOf(child.pid);
          if (used !== null && used > timeoutMs) fail(`Extraction took more than ${timeoutMs / 1000} s of processing time`);
        }, Math.min(CPU_POLL_MS, Math.max(1, timeoutMs)))
      : undefined;
    signal?.addEventListener('abort', cancel, { once: true });
    child.once('message', (outcome: ExtractionOutcome) =>
      outcome.ok ? settle(() => resolve({ chunks: outcome.chunks, peakMemoryMb: outcome.peakMemoryMb })) : fail(outcome.message, undefined, outcome.peakMemoryMb),
    );
    child.once('error', (err) => fail('The file could not be read: the extractor could not run', err));
    // Only reached when the extractor ends without sending an outcome.
    child.once('exit', (code, killedBy) => fail(stoppedMessage(code, killedBy, memoryMb)));
    try {
      os.setPriority(child.pid!, EXTRACTOR_NICENESS);
    } catch {
      // Not permitted on some systems: the extractor then runs at normal priority.
    }
    child.send(job, (err) => {
      if (err) fail('The file could not be read: the extractor could not run', err);
    });
  });
}

/** Why an extractor ended without an answer, for the uploader. */
function stoppedMessage(code: number | null, killedBy: NodeJS.Signals | null, memoryMb: number): string {
  // V8 aborts (SIGABRT), or crashes on purpose (its immediate crash is int3, ud2 on x64: SIGTRAP or
  // SIGILL), or exits 134 when it cannot allocate; SIGKILL is the CPU limit's hard stop.
  if (killedBy === 'SIGABRT' || killedBy === 'SIGTRAP' || killedBy === 'SIGILL' || killedBy === 'SIGSEGV' || code === 134 || code === 133) {
    return `The file could not be read: extracting it needed more than the ${memoryMb} MB of memory allowed`;
  }
  if (killedBy === 'SIGXCPU') return 'The file could not be read: extracting it took too much processing time';
  return `The file could not be read: the extractor stopped (${killedBy ?? `exit code ${code}`})`;
}
