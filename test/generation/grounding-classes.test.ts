import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { DOCUMENTS } from '../../bench/grounding-second-set.mjs';
import { writeGroundedPost } from '../../src/generation/grounded.js';
import { passagesToGroundOn } from '../../src/generation/relevance.js';
import type { GenerationRequest, GenerationResult } from '../../src/generation/types.js';
import { buildTestApp, fixturesDir } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

// The failure classes of the second grounding set (bench/grounding-second-set.mjs), one test
// each, over a knowledge base of all its documents searched as the generate endpoint searches
// it: the documents a person would hand the writer are drawn on, the ones sharing a generic
// word are not.

const ctx = await buildTestApp(t);
for (const name of DOCUMENTS) {
  const form = multipart([{ name: 'file', filename: name, content: fs.readFileSync(path.join(fixturesDir, 'grounding-second', name)), contentType: 'application/octet-stream' }]);
  const res = await ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: form.payload, headers: form.headers });
  if (res.statusCode !== 201) throw new Error(`${name}: ${res.body}`);
}
await ctx.app.indexer.whenIdle();

/** The files a post on the topic would be grounded on (a generator that records them and writes nothing). */
async function drawnOn(topic: string): Promise<string[]> {
  let files: string[] = [];
  const recorder = {
    generate: async (req: GenerationRequest): Promise<GenerationResult> => {
      files = [...new Set(passagesToGroundOn(req).map((passage) => passage.fileName))];
      return { post: { title: topic, description: '', category: 'x', tags: [], content: '' }, provider: 'builtin', model: 'builtin' };
    },
  };
  await writeGroundedPost({ knowledge: ctx.app.knowledge, generator: recorder }, ctx.site.id, { topic });
  return files;
}

t.test('synonyms a thesaurus knows: rain barrel / water butt, faucet / tap, frying pan / skillet, fish tank / aquarium', async (t) => {
  t.same(await drawnOn('Setting up a rain barrel for a small vegetable garden'), ['water-butt-guide.md']);
  t.same(await drawnOn('How to fix a leaky faucet'), ['dripping-tap-repair.txt']);
  t.same(await drawnOn('Caring for a cast-iron frying pan'), ['cast-iron-skillet.txt']);
  t.same(await drawnOn('Keeping a fish tank healthy'), ['freshwater-aquarium-setup.md']);
});

t.test('a rare name the document is about, the rest of the topic generic', async (t) => {
  t.same(await drawnOn('A weekend in Lisbon'), ['lisbon-three-days.md']);
  t.same(await drawnOn('What changed in Larkspur 130?'), ['larkspur-130-release-notes.md']);
  t.same(await drawnOn('Who was Ada Lovelace?'), ['ada-lovelace.md']);
});

t.test("paraphrases of the document's subject", async (t) => {
  t.same(await drawnOn('Your first long race'), ['first-marathon-guide.md']);
  t.same(await drawnOn('Making walking boots last longer'), ['leather-boots-care.md']);
  t.same(await drawnOn('Treating a scald from a kettle'), ['burns-first-aid.md']);
});

t.test('generic words shared by chance ("care", "water", "history", "learn") make no document relevant on their own', async (t) => {
  for (const topic of ['How to care for a new tattoo', 'Caring for an elderly parent at home', 'A short history of the bicycle', 'The history of jazz', 'Learning to swim as an adult', 'Learn to code in a weekend', 'Water polo for beginners']) {
    t.same(await drawnOn(topic), [], topic);
  }
});
