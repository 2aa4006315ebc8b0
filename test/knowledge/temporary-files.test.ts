import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { TemporaryFiles } from '../../src/knowledge/object-store.js';

const folder = (t: Test) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blog-temporary-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return new TemporaryFiles(dir);
};

/** Opening a file waits `ms` first, as it does when the thread pool is busy with other work. */
function slowOpens(t: Test, ms: number) {
  const { open } = fs;
  const openPromise = fs.promises.open;
  fs.open = ((...args: unknown[]) => {
    setTimeout(() => (open as (...a: unknown[]) => void)(...args), ms);
  }) as typeof fs.open;
  fs.promises.open = (async (...args: Parameters<typeof openPromise>) => {
    await sleep(ms);
    return openPromise(...args);
  }) as typeof openPromise;
  t.teardown(() => {
    fs.open = open;
    fs.promises.open = openPromise;
  });
}

t.test('a received stream is kept whole, its bytes counted', async (t) => {
  const temporary = folder(t);
  const source = new PassThrough();
  source.end('some bytes');
  const { tmpPath, size } = await temporary.receive(source);
  t.equal(size, 10);
  t.equal(fs.readFileSync(tmpPath, 'utf8'), 'some bytes');
});

t.test('a stream that fails leaves nothing, even when the file opens only after it failed', async (t) => {
  const temporary = folder(t);
  slowOpens(t, 50);
  for (const failing of ['at once', 'after some bytes']) {
    const source = new PassThrough();
    source.on('error', () => {}); // as the multipart parser's file streams have
    if (failing === 'at once') setImmediate(() => source.destroy(new Error('the request broke off')));
    else {
      source.write('unterminated');
      setTimeout(() => source.destroy(new Error('the request broke off')), 5);
    }
    await t.rejects(temporary.receive(source), /broke off/, failing);
    await sleep(150);
    t.same(fs.readdirSync(temporary.dir), [], `nothing is left (failing ${failing})`);
  }
});

t.test('a file that cannot be created fails the receive and ends the stream it was given', async (t) => {
  const temporary = folder(t);
  fs.rmSync(temporary.dir, { recursive: true });
  const source = new PassThrough();
  source.write('bytes nobody will keep');
  await t.rejects(temporary.receive(source), { code: 'ENOENT' });
  t.ok(source.destroyed, 'the source is not left waiting for a reader');
});

t.test('a stream that fails while the file is still opening is refused, not an uncaught error', async (t) => {
  const temporary = folder(t);
  slowOpens(t, 50);
  // Nobody listens to this stream's errors (as to a download's body): it breaks off mid-open.
  const source = new PassThrough();
  setTimeout(() => source.destroy(new Error('connection reset')), 10);
  await t.rejects(temporary.receive(source), /connection reset/);
  await sleep(100);
  t.same(fs.readdirSync(temporary.dir), [], 'nothing is left');
});
