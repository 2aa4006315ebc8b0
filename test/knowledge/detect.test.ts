import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import JSZip from 'jszip';
import t from 'tap';
import {
  ACCEPTED_EXTENSIONS,
  MEDIA_TYPES,
  contentMatches,
  extensionOf,
} from '../../src/knowledge/detect.js';

const FIXTURES = path.resolve(import.meta.dirname ?? path.dirname(fileURLToPath(import.meta.url)), '../fixtures');
const fixture = (name: string) => path.join(FIXTURES, name);
const fixtureFiles = ['pdf', 'word', 'text'].flatMap((dir) => readdirSync(fixture(dir)).map((name) => `${dir}/${name}`));

function writeTemp(dir: string, name: string, content: string | Uint8Array): string {
  const filePath = path.join(dir, name);
  writeFileSync(filePath, content);
  return filePath;
}

async function zipBytes(entries: Record<string, string>, comment?: string): Promise<Uint8Array> {
  const zip = new JSZip();
  for (const [name, content] of Object.entries(entries)) zip.file(name, content);
  return zip.generateAsync({ type: 'uint8array', comment });
}

t.test('extensionOf', async (t) => {
  t.equal(extensionOf('Notes.MD'), 'md', 'case-insensitive');
  t.equal(extensionOf('report.final.PDF'), 'pdf', 'last extension');
  t.equal(extensionOf('report.pdf.exe'), null, 'only the last extension counts');
  t.equal(extensionOf('C:\\Users\\me\\letter.docx'), 'docx', 'Windows path');
  t.equal(extensionOf('dir.txt/README'), null, 'a dot in a directory is no extension');
  t.equal(extensionOf('.md'), null, 'hidden file');
  t.equal(extensionOf('Makefile'), null);
  t.equal(extensionOf('archive.zip'), null);
  for (const ext of ACCEPTED_EXTENSIONS) t.equal(extensionOf(`file.${ext}`), ext);
});

t.test('MEDIA_TYPES', async (t) => {
  t.same(Object.keys(MEDIA_TYPES).sort(), [...ACCEPTED_EXTENSIONS].sort());
  t.equal(MEDIA_TYPES.docx, 'application/vnd.openxmlformats-officedocument.wordprocessingml.document');
  t.equal(MEDIA_TYPES.doc, 'application/msword');
});

t.test('fixtures path resolves beside the project', async (t) => {
  for (const name of ['pdf/fd_ins_8859.pdf', 'word/test03.doc', 'word/test03.docx', 'text/product-catalog.csv']) {
    t.ok(fixtureFiles.includes(name), `${name} in ${FIXTURES}`);
  }
});

t.test('every fixture matches its own extension', async (t) => {
  for (const name of fixtureFiles) {
    const ext = extensionOf(name);
    t.ok(ext, `${name} has an accepted extension`);
    t.equal(await contentMatches(ext!, fixture(name)), true, name);
  }
});

t.test('the corrupt .doc still has the OLE2 magic, so detection accepts it', async (t) => {
  const head = readFileSync(fixture('word/badfile-01-bad-header.doc')).subarray(0, 8);
  t.equal(head.toString('hex'), 'd0cf11e0a1b11ae1');
  t.equal(await contentMatches('doc', fixture('word/badfile-01-bad-header.doc')), true);
});

t.test('content of another type is rejected', async (t) => {
  const cases: Array<[string, Parameters<typeof contentMatches>[0]]> = [
    ['text/release-notes-2026.txt', 'pdf'],
    ['pdf/fd_ins_8859.pdf', 'docx'],
    ['pdf/fd_ins_8859.pdf', 'doc'],
    ['word/test03.docx', 'doc'],
    ['word/test03.doc', 'docx'],
    ['word/test03.docx', 'pdf'],
    ['pdf/fd_ins_8859.pdf', 'txt'],
    ['word/test03.doc', 'csv'],
    ['word/test03.docx', 'md'],
  ];
  for (const [name, ext] of cases) t.equal(await contentMatches(ext, fixture(name)), false, `${name} as .${ext}`);
});

t.test('renamed copies are judged by content, not name', async (t) => {
  const dir = t.testdir();
  const textAsPdf = path.join(dir, 'notes.pdf');
  copyFileSync(fixture('text/release-notes-2026.txt'), textAsPdf);
  t.equal(await contentMatches('pdf', textAsPdf), false, 'text body named .pdf');
  const pdfAsDocx = path.join(dir, 'form.docx');
  copyFileSync(fixture('pdf/fd_ins_8859.pdf'), pdfAsDocx);
  t.equal(await contentMatches('docx', pdfAsDocx), false, 'PDF named .docx');
});

t.test('DOCX needs a zip listing word/document.xml', async (t) => {
  const dir = t.testdir();
  const plainZip = writeTemp(dir, 'plain.docx', await zipBytes({ 'readme.txt': 'hello', 'word/other.xml': '<x/>' }));
  t.equal(await contentMatches('docx', plainZip), false, 'zip without word/document.xml');

  const minimal = writeTemp(dir, 'minimal.docx', await zipBytes({ '[Content_Types].xml': '<Types/>', 'word/document.xml': '<w:document/>' }));
  t.equal(await contentMatches('docx', minimal), true, 'zip with word/document.xml');

  // A comment that itself contains an EOCD signature must not be taken for the record.
  const fakeEocd = Buffer.from([0x50, 0x4b, 0x05, 0x06]).toString('latin1');
  const commented = writeTemp(dir, 'commented.docx', await zipBytes({ 'word/document.xml': '<w:document/>' }, `note ${fakeEocd} ${'x'.repeat(40)}`));
  t.equal(await contentMatches('docx', commented), true, 'archive comment with a fake signature');

  const minimalBytes = Buffer.from(readFileSync(minimal));
  const eocd = minimalBytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const pointingAtStart = Buffer.from(minimalBytes);
  pointingAtStart.writeUInt32LE(0, eocd + 16);
  t.equal(await contentMatches('docx', writeTemp(dir, 'at-start.docx', pointingAtStart)), false, 'directory offset at a local header');
  const pointingPastEnd = Buffer.from(minimalBytes);
  pointingPastEnd.writeUInt32LE(0xffffffff, eocd + 16);
  t.equal(await contentMatches('docx', writeTemp(dir, 'past-end.docx', pointingPastEnd)), false, 'directory offset past the end');

  const docx = readFileSync(fixture('word/test03.docx'));
  const truncated = writeTemp(dir, 'truncated.docx', docx.subarray(0, docx.length - 100));
  t.equal(await contentMatches('docx', truncated), false, 'truncated: no central directory');

  const headOnly = writeTemp(dir, 'head.docx', docx.subarray(0, 4));
  t.equal(await contentMatches('docx', headOnly), false, 'only the local header magic');

  t.equal(await contentMatches('docx', writeTemp(dir, 'empty.docx', '')), false, 'empty file');
});

t.test('text formats must be UTF-8 without NUL bytes', async (t) => {
  const dir = t.testdir();
  t.equal(await contentMatches('txt', writeTemp(dir, 'ok.txt', 'Grüße, 日本, 😀\n')), true, 'UTF-8');
  t.equal(await contentMatches('md', writeTemp(dir, 'bom.md', '\uFEFF# Title\n')), true, 'BOM accepted');
  t.equal(await contentMatches('txt', writeTemp(dir, 'nul.txt', 'abc\u0000def')), false, 'NUL byte');
  t.equal(await contentMatches('csv', writeTemp(dir, 'latin1.csv', Buffer.from('caf\xe9,1\n', 'latin1'))), false, 'Latin-1 é');
  t.equal(await contentMatches('txt', writeTemp(dir, 'bad.txt', Buffer.from([0x61, 0xc3, 0x28]))), false, 'invalid sequence');
  t.equal(await contentMatches('txt', writeTemp(dir, 'cut.txt', Buffer.from([0x61, 0xe2, 0x82]))), false, 'sequence cut by the end of file');
  t.equal(await contentMatches('txt', writeTemp(dir, 'utf16.txt', Buffer.from('\uFEFFhi', 'utf16le'))), false, 'UTF-16');

  // The read stream delivers 64 KiB chunks: put a 3-byte character across the first boundary.
  const straddling = Buffer.concat([Buffer.alloc(65535, 'a'), Buffer.from('€ and more')]);
  t.equal(await contentMatches('txt', writeTemp(dir, 'straddle.txt', straddling)), true, 'character split across reads');
  const lateNul = Buffer.concat([Buffer.alloc(200_000, 'a'), Buffer.from([0])]);
  t.equal(await contentMatches('txt', writeTemp(dir, 'late-nul.txt', lateNul)), false, 'NUL far into the file');
});

t.test('a missing file rejects rather than passing as a mismatch', async (t) => {
  await t.rejects(contentMatches('pdf', path.join(t.testdir(), 'missing.pdf')), { code: 'ENOENT' });
});
