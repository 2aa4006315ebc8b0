import t, { type Test } from 'tap';
import { chunkText } from '../../src/knowledge/chunk.js';
import { withoutWordSeparators } from '../../src/text/cjk.js';

const HEADER = '[notes.md]\n';

/** Chunk bodies without the file-name header, asserting every chunk has it. */
function bodies(t: Test, chunks: string[], header = HEADER): string[] {
  for (const chunk of chunks) t.ok(chunk.startsWith(header), `header on ${JSON.stringify(chunk.slice(0, 30))}`);
  return chunks.map((chunk) => chunk.slice(header.length));
}

/** Longest prefix of `next` that `previous` ends with. */
function overlapOf(previous: string, next: string): string {
  for (let length = Math.min(previous.length, next.length); length > 0; length--) {
    if (previous.endsWith(next.slice(0, length))) return next.slice(0, length);
  }
  return '';
}

/**
 * Deterministic prose: sentences of made-up words, paragraphs of a few sentences. Every word
 * is `k…q`, so a word cut in two shows at the edge of a chunk.
 */
function prose(paragraphs: number, sentencesPerParagraph: number, seed = 1): string {
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const letters = () => 'abcdefghij'.slice(0, 1 + Math.floor(random() * 8)).split('').sort(() => random() - 0.5).join('');
  const word = () => `k${letters()}q`;
  const sentence = () => {
    const words = Array.from({ length: 6 + Math.floor(random() * 12) }, word).join(' ');
    return `${words[0]!.toUpperCase()}${words.slice(1)}.`;
  };
  return Array.from({ length: paragraphs }, () => Array.from({ length: sentencesPerParagraph }, sentence).join(' ')).join('\n\n');
}

const WHOLE_WORD = /^[kK][a-j]+q\.?$/;

t.test('empty and blank input give no chunks', async (t) => {
  t.same(chunkText('notes.md', ''), []);
  t.same(chunkText('notes.md', ' \n\n\t \n'), []);
});

t.test('short text is one chunk with a header line', async (t) => {
  t.same(chunkText('coffee-brewing-guide.md', '  Brew at 93 °C.\n\n'), ['[coffee-brewing-guide.md]\nBrew at 93 °C.']);
  t.same(chunkText('evil\nname.txt', 'x'), ['[evil name.txt]\nx'], 'a line break in the name cannot break the header line');
});

t.test('sizes, overlap and whole words on prose', async (t) => {
  const text = prose(40, 6);
  const size = 1000;
  const overlap = 120;
  const chunks = bodies(t, chunkText('notes.md', text));
  t.ok(chunks.length > text.length / size, `${chunks.length} chunks`);
  chunks.forEach((body, index) => {
    t.ok(body.length <= size, `chunk ${index} within size (${body.length})`);
    if (index < chunks.length - 1) t.ok(body.length >= size / 2, `chunk ${index} well filled (${body.length})`);
    t.equal(body, body.trim(), `chunk ${index} trimmed`);
    const [first, last] = [body.split(/\s+/)[0]!, body.split(/\s+/).at(-1)!];
    t.match(first, WHOLE_WORD, `chunk ${index} starts with a whole word`);
    t.match(last, WHOLE_WORD, `chunk ${index} ends with a whole word`);
  });
  for (let index = 1; index < chunks.length; index++) {
    const shared = overlapOf(chunks[index - 1]!, chunks[index]!);
    t.ok(shared.length > overlap - 15 && shared.length <= overlap, `overlap ${index}: ${shared.length} characters`);
  }
  // Every paragraph of the original survives, each one inside some chunk or across neighbours.
  const joined = chunks.map((body, index) => (index === 0 ? body : body.slice(overlapOf(chunks[index - 1]!, body).length))).join('');
  t.equal(joined.replace(/\s+/g, ' '), text.replace(/\s+/g, ' '), 'chunks minus overlaps rebuild the text');
});

t.test('chunks end at paragraph breaks when a paragraph ends in the second half', async (t) => {
  // Paragraphs of a few hundred characters: several fit in a chunk of 1000.
  const paragraphs = prose(30, 3, 7).split('\n\n');
  const chunks = bodies(t, chunkText('notes.md', paragraphs.join('\n\n')));
  for (const body of chunks) {
    t.ok(paragraphs.some((paragraph) => body.endsWith(paragraph)), `ends with a whole paragraph: …${body.slice(-40)}`);
  }
});

t.test('inside a long paragraph, chunks end at sentence ends', async (t) => {
  const chunks = bodies(t, chunkText('notes.md', prose(1, 80, 3)));
  t.ok(chunks.length >= 5);
  for (const body of chunks) t.ok(body.endsWith('.'), `ends a sentence: …${body.slice(-30)}`);
});

t.test('a single word longer than the size is cut, the words around it are not', async (t) => {
  const longWord = 'x'.repeat(2500);
  const chunks = bodies(t, chunkText('notes.md', `before words here ${longWord} after words here`));
  for (const body of chunks) t.ok(body.length <= 1000, `within size (${body.length})`);
  t.equal(chunks[0], 'before words here', 'the words before it stay whole');
  t.equal(chunks.join('').replace(/[^x]/g, '').length, 2500, 'nothing of the word lost or repeated');
  t.ok(chunks.slice(1).every((body) => /x{400,}/.test(body)), 'no chunk without new text');
  t.match(chunks.at(-1), /^x+ after words here$/, 'the words after it stay whole');
});

t.test('a long whitespace run drops the overlap rather than repeating it', async (t) => {
  const before = prose(1, 8, 5);
  const after = prose(1, 8, 6);
  const chunks = bodies(t, chunkText('notes.md', `${before}${' '.repeat(3000)}${after}`));
  for (let index = 1; index < chunks.length; index++) {
    t.notOk(chunks[index - 1]!.includes(chunks[index]!), `chunk ${index} brings new text`);
  }
  t.ok(chunks.every((body) => body.length <= 1000));
  t.equal(chunks.join(' ').replace(/\s+/g, ' ').length >= `${before} ${after}`.length, true, 'all text kept');
});

t.test('a cut inside a word never splits a surrogate pair', async (t) => {
  const chunks = bodies(t, chunkText('notes.md', '😀'.repeat(30), { size: 11, overlap: 2 }));
  for (const body of chunks) t.notMatch(body, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/, body);
  t.equal(chunks.join(''), '😀'.repeat(30));
});

t.test('Japanese without spaces ends chunks at 。 and overlaps between characters', async (t) => {
  const sentence = '東京電力の福島第一原子力発電所は日本の発電所です。';
  const indexed = bodies(t, chunkText('notes.md', sentence.repeat(100), { size: 200, overlap: 30 }));
  t.match(indexed[0], /^東京\u200B電力\u200Bの\u200B福島\u200B第一\u200B原子力\u200B発電\u200B所/, 'words are separated by U+200B for the index');
  // Sizes and overlaps count the text as written, without the separators.
  const chunks = indexed.map(withoutWordSeparators);
  t.ok(chunks.length > 10);
  chunks.forEach((body, index) => {
    t.ok(body.length <= 200);
    if (index < chunks.length - 1) t.ok(body.endsWith('。'), `chunk ${index} ends a sentence`);
    if (index > 0) t.ok(overlapOf(chunks[index - 1]!, body).length > 20, `chunk ${index} overlaps`);
  });
});

t.test('options', async (t) => {
  const chunks = bodies(t, chunkText('notes.md', prose(10, 5), { size: 300, overlap: 40 }));
  for (const body of chunks) t.ok(body.length <= 300);
  t.ok(chunks.length > 10);
  t.throws(() => chunkText('notes.md', 'text', { size: 0 }), RangeError);
  t.throws(() => chunkText('notes.md', 'text', { size: 100, overlap: 50 }), RangeError, 'overlap of half the size');
  t.throws(() => chunkText('notes.md', 'text', { overlap: -1 }), RangeError);
  t.same(bodies(t, chunkText('notes.md', 'one two three four five', { size: 10, overlap: 0 })), ['one two', 'three four', 'five']);
});

t.test('a 5 MB text chunks (linear work, no timing asserted)', async (t) => {
  // No blank lines at all, like text out of a PDF: the worst case for paragraph splitting.
  const text = prose(1, 70_000, 11).replace(/\. /g, '.\n');
  t.ok(text.length > 5_000_000, `${text.length} characters`);
  const chunks = chunkText('big.pdf', text);
  t.ok(chunks.length > text.length / 1000 && chunks.length < text.length / 500, `${chunks.length} chunks`);
  t.ok(chunks.every((chunk) => chunk.length <= '[big.pdf]\n'.length + 1000), 'all within size');
});

t.test('Chinese and Japanese runs are separated into words, Latin text is left as it is', async (t) => {
  const [chunk] = chunkText('原子力.pdf', '这是一个用来测试nodejs解析Word文档。Plain English stays as written.');
  t.equal(chunk, '[原子力.pdf]\n这\u200B是\u200B一个\u200B用\u200B来\u200B测试\u200Bnodejs\u200B解析\u200BWord\u200B文\u200B档。Plain English stays as written.');
  t.equal(withoutWordSeparators(chunk!), '[原子力.pdf]\n这是一个用来测试nodejs解析Word文档。Plain English stays as written.', 'removing the separators gives the text back');
  t.same(chunkText('notes.md', 'No CJK here: 1:16, CL-101, v2.3.'), ['[notes.md]\nNo CJK here: 1:16, CL-101, v2.3.']);
});
