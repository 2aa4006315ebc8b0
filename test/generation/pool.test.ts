import fs from 'node:fs';
import os from 'node:os';
import t from 'tap';
import { BuiltinGenerator } from '../../src/generation/builtin/index.js';
import { BuiltinWorkerPool, COMPOSER_NICENESS } from '../../src/generation/builtin/pool.js';
import { groundingPassages } from '../../src/generation/relevance.js';
import type { GenerationRequest, Passage } from '../../src/generation/types.js';

const passages: Passage[] = [
  {
    fileId: 'f-brew',
    fileName: 'coffee-brewing-guide.md',
    score: 0.92,
    text: '# Brewing basics\n\nThe grind size controls extraction: a finer grind extracts faster and tastes stronger. Use water between 92 and 96 degrees Celsius for the best extraction.',
  },
  {
    fileId: 'f-beans',
    fileName: 'bean-storage.txt',
    score: 0.81,
    text: 'Coffee beans stay fresh for about two weeks after roasting when stored in an airtight container. Light, heat and moisture are the main enemies of fresh beans.',
  },
];
const request = (topic: string): GenerationRequest => ({
  topic,
  style: 'casual',
  length: 'short',
  tone: 'informative',
  includeExamples: true,
  targetAudience: null,
  passages,
});
const TOPICS = ['Brewing coffee at home', 'Keeping coffee beans fresh', 'Grind size and extraction', 'Water temperature for coffee', 'Coffee for beginners', 'Storing beans'];

t.test('the pool composes the same posts as the composer on the event loop, several at once', async (t) => {
  const pool = new BuiltinWorkerPool(2);
  t.teardown(() => pool.close());
  const inProcess = new BuiltinGenerator();
  const threaded = await Promise.all(TOPICS.map((topic) => pool.generate(request(topic))));
  for (const [i, topic] of TOPICS.entries()) t.same(threaded[i], await inProcess.generate(request(topic)), topic);
  t.equal(threaded[0]!.provider, 'builtin');

  // Passages to choose from (groundingLimit) are chosen on the thread, as on the event loop.
  const retrieved = [...passages, { fileId: 'f-whole', fileName: 'whole-beans.txt', score: 0.7, text: 'Whole coffee beans keep fresh far longer than ground coffee: grind the beans just before brewing, and buy them in small bags.' }];
  const choosing = (topic: string): GenerationRequest => ({ ...request(topic), passages: retrieved, groundingLimit: 1 });
  const chosenOnThreads = await Promise.all(TOPICS.map((topic) => pool.generate(choosing(topic))));
  for (const [i, topic] of TOPICS.entries()) {
    t.same(chosenOnThreads[i], await inProcess.generate(choosing(topic)), `${topic}, choosing`);
    t.same(chosenOnThreads[i], await inProcess.generate({ ...request(topic), passages: groundingPassages(topic, retrieved, 1) }), `${topic}: as if chosen before`);
  }
  const several = TOPICS.filter((topic) => groundingPassages(topic, retrieved).length >= 2);
  t.ok(several.length >= 2, `several passages may ground ${several.join(', ')}`);
  for (const topic of several) {
    // Medium: a short post on this little text uses half of it, which one passage may hold.
    const one = await inProcess.generate({ ...choosing(topic), length: 'medium' });
    t.not(one.post.content, (await inProcess.generate({ ...request(topic), passages: retrieved, length: 'medium' })).post.content, `${topic}: one of them grounds it`);
  }
});

t.test('a cancelled post stops waiting; one cancelled before it starts never starts', async (t) => {
  const pool = new BuiltinWorkerPool(1);
  t.teardown(() => pool.close());
  const aborted = AbortSignal.abort(new Error('client went away'));
  await t.rejects(pool.generate(request('Never'), aborted), { message: 'client went away' });

  const first = pool.generate(request(TOPICS[0]!));
  const cancel = new AbortController();
  const second = pool.generate(request(TOPICS[1]!), cancel.signal);
  cancel.abort(new Error('shutting down'));
  await t.rejects(second, { message: 'shutting down' }, 'the waiting post is refused at once');
  t.match(await first, { provider: 'builtin' }, 'the one composing finishes');
  t.match(await pool.generate(request(TOPICS[2]!)), { provider: 'builtin' }, 'the thread takes the next post');
});

t.test('closing refuses the posts still waiting and any new one', async (t) => {
  const pool = new BuiltinWorkerPool(1);
  const running = pool.generate(request(TOPICS[0]!));
  const waiting = pool.generate(request(TOPICS[1]!));
  const closed = pool.close();
  await t.rejects(waiting, { message: 'The builtin composer is shut down' });
  await t.rejects(running, { message: 'The builtin composer is shut down' }, 'so is the one composing');
  await closed;
  await t.rejects(pool.generate(request(TOPICS[2]!)), { message: 'The builtin composer is shut down' });
});

t.test('composing threads run at a lower priority than the event loop (Linux: per-thread niceness)', { skip: process.platform !== 'linux' && 'per-thread niceness is Linux only' }, async (t) => {
  // Field 19 of /proc/<pid>/task/<tid>/stat is the thread's niceness (after the parenthesised name).
  const niceness = () =>
    fs.readdirSync('/proc/self/task').map((tid) => Number(fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]));
  const before = niceness().filter((n) => n === COMPOSER_NICENESS).length;
  const pool = new BuiltinWorkerPool(2);
  t.teardown(() => pool.close());
  await Promise.all(TOPICS.slice(0, 2).map((topic) => pool.generate(request(topic))));
  t.equal(niceness().filter((n) => n === COMPOSER_NICENESS).length - before, 2, 'each of the 2 threads');
  t.equal(os.getPriority(), 0, 'the event loop keeps its priority');
});
