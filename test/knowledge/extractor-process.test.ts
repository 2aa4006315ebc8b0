/**
 * The extractor process from outside: a memory limit no allocation gets past, and no
 * extractor outliving its server or its own deadline. Hostile files are built here.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { codeRangeMb, runExtractor } from '../../src/knowledge/extract-runner.js';
import { DEFLATED, type ZipWriteEntry } from '../../src/knowledge/zip.js';
import { BOOTSTRAP_KEY, built, spawnServer, tempDataDir, waitFor } from '../helpers/app.js';
import { deflateRepeated, docxOf, docxParagraph, pdfWithContentStream } from '../helpers/hostile.js';
import { multipart } from '../helpers/multipart.js';

const MiB = 1024 * 1024;
const TEXT_OP = 'BT /F1 12 Tf 72 720 Td (The quick brown fox jumps over the lazy dog) Tj ET\n';

function writeTemp(dir: string, name: string, bytes: Buffer | string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
}

t.test('the extractor cannot take more memory than it is given, whatever allocates it', { skip: process.platform === 'win32' && 'no ulimit' }, async (t) => {
  const dir = t.testdir();
  // Four XML parts of 30 MiB each: within the inflation budget, but 240 MB of buffers to hold them.
  const part = (name: string): ZipWriteEntry => {
    const { data, size } = deflateRepeated('<x>', '<y>filler filler</y>', Math.floor((30 * MiB) / 20), '</x>');
    return { name, data, method: DEFLATED, size };
  };
  const docx = docxOf(docxParagraph('hello'), 1, [1, 2, 3, 4].map((i) => part(`customXml/item${i}.xml`))).docx;
  const file = writeTemp(dir, 'heavy.docx', docx);
  // The same limit leaves room for an ordinary file: the extractor starts and works under it
  // (on Node 24 a limit that forgot V8's code ranges stopped every extractor at startup).
  const light = writeTemp(dir, 'light.docx', docxOf(docxParagraph('hello'), 1).docx);
  t.match((await runExtractor(light, 'docx', 'light.docx', { memoryMb: 250 })).chunks.join('\n'), /hello/);
  // However it fails (a buffer refused, V8 giving up on its heap, or crashing on purpose), it says memory.
  for (const memoryMb of [150, 250]) {
    const error = await runExtractor(file, 'docx', 'heavy.docx', { memoryMb }).then(
      () => null,
      (err: Error) => err,
    );
    t.match(error?.message, /memory/, `refused for memory at ${memoryMb} MB, not left to grow`);
  }
  // With the service's limit the same file is fine.
  t.ok((await runExtractor(file, 'docx', 'heavy.docx')).chunks.length > 0);
});

t.test("V8's code range is read from the process's own mappings", async (t) => {
  const maps = [
    '00400000-0074a000 r--p 00000000 fe:00 16039968   /usr/bin/node',
    '7fb72c000000-7fb74bdc0000 rwxp 00000000 00:00 0 ',
    '7fb754030000-7fb764000000 ---p 00000000 00:00 0 ',
    '7f7ce0003000-7f7ce003f000 rwxp 00000000 00:00 0 ',
    '7fb769c2b000-7fb76a42b000 rw-p 00000000 00:00 0 ',
  ].join('\n');
  t.equal(codeRangeMb(maps), 510, 'the largest anonymous rwx mapping, rounded up');
  t.equal(codeRangeMb('7fb754030000-7fb764000000 ---p 00000000 00:00 0 \n'), 0, 'a reserved, inaccessible range does not count');
  t.equal(codeRangeMb(''), 0);
});

/** Pids of extractor processes whose parent is `parentPid` (Linux /proc). */
function extractorsOf(parentPid: number): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parentPid && fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('extract-worker')) found.push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return found;
}
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !fs.readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
};

t.test('an extractor dies with its server, even in the middle of a long parse', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  const dataDir = tempDataDir(t);
  const port = String(20000 + Math.floor(Math.random() * 20000));
  const server = spawnServer({ DATA_DIR: dataDir, PORT: port, BOOTSTRAP_API_KEY: BOOTSTRAP_KEY, GENERATOR: 'builtin', LOG_LEVEL: 'warn' });
  t.teardown(() => server.kill('SIGKILL'));
  await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => null))?.ok, 'the server to listen', 60_000);
  // ~9 s of pdf.js work on a 110 KB file: 31 MiB of content stream, under the stream limit.
  const { pdf } = pdfWithContentStream(TEXT_OP, Math.floor((31 * MiB) / TEXT_OP.length));
  const form = multipart([{ name: 'file', filename: 'slow.pdf', content: pdf }]);
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/knowledge`, {
    method: 'POST',
    headers: { ...form.headers, authorization: `Bearer ${BOOTSTRAP_KEY}` },
    body: new Uint8Array(form.payload),
  });
  t.equal(res.status, 201);
  const [extractor] = await waitFor(() => extractorsOf(server.pid!).length && extractorsOf(server.pid!), 'the extractor to start', 90_000);
  server.kill('SIGKILL');
  await once(server, 'exit');
  const killedAt = Date.now();
  // Well inside the parse it was in (~9 s on a quiet machine, longer on a busy one): it was
  // ended, not finished, within the 5 s the soak allows even on a busy machine (on Linux the
  // kernel kills it with its parent: setpriv --pdeathsig; the niced watchdog may wait its turn).
  await waitFor(() => !alive(extractor!), 'the orphaned extractor to end', 5000);
  t.ok(Date.now() - killedAt < 5000, `the extractor ended ${Date.now() - killedAt} ms after its server`);
});

t.test('an extractor ends itself at its own deadline, whatever its parent does', async (t) => {
  const dir = t.testdir();
  const { pdf } = pdfWithContentStream(TEXT_OP, Math.floor((31 * MiB) / TEXT_OP.length));
  const file = writeTemp(dir, 'slow.pdf', pdf);
  // The extractor on its own (compiled, as the server runs it), with no timer on this side:
  // only its watchdog can stop it early.
  const child = fork(built('src/knowledge/extract-worker.ts'), [], { execArgv: ['--enable-source-maps'], serialization: 'advanced', stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  t.teardown(() => child.kill('SIGKILL'));
  const started = Date.now();
  child.send({ filePath: file, ext: 'pdf', fileName: 'slow.pdf', deadlineMs: 1500 });
  const [code, signal] = await once(child, 'exit');
  t.equal(signal, 'SIGKILL', `ended by its watchdog (code ${code})`);
  t.ok(Date.now() - started < 6000, `after ${Date.now() - started} ms, not after the ~9 s parse`);
});

t.test('an extractor whose parent is already gone when it starts ends at once, before reading any job', async (t) => {
  // As if the server died between starting it and its modules loading: the pid it was given is not its parent's.
  const child = fork(built('src/knowledge/extract-worker.ts'), [], { execArgv: ['--enable-source-maps'], serialization: 'advanced', stdio: ['ignore', 'ignore', 'ignore', 'ipc'], env: { ...process.env, EXTRACTOR_PARENT_PID: '1' } });
  t.teardown(() => child.kill('SIGKILL'));
  const [code, signal] = await once(child, 'exit');
  t.same({ code, signal }, { code: 70, signal: null }, 'it exits as an orphan');
});

t.test('the time budget is processing time: an extractor kept off the CPU past it still finishes', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  const dir = t.testdir();
  const file = writeTemp(dir, 'notes.md', '# Notes\n\nThe quick brown fox jumps over the lazy dog.\n');
  // 8 s of processing time: the extractor's start through the test's TypeScript loader takes a few.
  const extraction = runExtractor(file, 'md', 'notes.md', { timeoutMs: 8000 });
  // A busy machine, at its worst: the extractor gets no CPU at all for longer than its budget.
  const [extractor] = await waitFor(() => {
    // One scan: a second one may no longer see an extractor of the test before, ending meanwhile.
    const found = extractorsOf(process.pid);
    return found.length > 0 && found;
  }, 'the extractor to start');
  process.kill(extractor!, 'SIGSTOP');
  t.teardown(() => void (alive(extractor!) && process.kill(extractor!, 'SIGKILL')));
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  process.kill(extractor!, 'SIGCONT');
  const { chunks } = await extraction;
  t.match(chunks.join('\n'), 'quick brown fox', 'extracted once it ran');
});
