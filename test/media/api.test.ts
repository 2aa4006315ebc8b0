import fs from 'node:fs';
import path from 'node:path';
import exifr from 'exifr';
import sharp from 'sharp';
import t from 'tap';
import { ISO_MS, UUID_V4, buildTestApp, fixturesDir, type TestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

const image = (name: string) => fs.readFileSync(path.join(fixturesDir, 'images', name));

const upload = (ctx: TestApp, filename: string, content: Buffer | string, key?: string) => {
  const form = multipart([{ name: 'file', filename, content }]);
  return ctx.call({ method: 'POST', url: '/api/v1/media', payload: form.payload, headers: form.headers, key });
};

/** The path of a media URL (the app answers it in-process, whatever host the URL names). */
const pathOf = (url: string) => new URL(url).pathname;
/** Bytes of a stored file, read back through the public URL. */
async function fetchPublic(ctx: TestApp, url: string) {
  const res = await ctx.call({ method: 'GET', url: pathOf(url), key: null });
  return res;
}
/** Every file under storage/ except temporary ones. */
function storedFiles(dataDir: string): string[] {
  const root = path.join(dataDir, 'storage');
  if (!fs.existsSync(root)) return [];
  return fs.readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.relative(root, path.join(e.parentPath ?? e.path, e.name)));
}

t.test('every accepted format is taken, sized and stored with its variants', async (t) => {
  const ctx = await buildTestApp(t);
  const cases: [string, string, number, number, number[]][] = [
    // file, format, width, height, variant widths (each in WebP and the original's format)
    ['small.jpg', 'jpeg', 500, 333, []],
    ['photo.png', 'png', 700, 467, [600]],
    ['photo.webp', 'webp', 1700, 1133, [600, 1000, 1600]],
    ['photo.avif', 'avif', 640, 427, [600]],
    ['animated.gif', 'gif', 200, 120, []],
  ];
  for (const [file, format, width, height, widths] of cases) {
    const res = await upload(ctx, file, image(file));
    t.equal(res.statusCode, 201, file);
    const { media, site, message } = res.json().data;
    t.equal(message, 'Image uploaded successfully');
    t.same(site, ctx.site);
    t.same(Object.keys(media).sort(), ['alt', 'createdAt', 'format', 'height', 'id', 'name', 'sizeBytes', 'url', 'variants', 'width']);
    t.match(media.id, UUID_V4);
    t.match(media.createdAt, ISO_MS);
    t.equal(media.name, file);
    t.equal(media.format, format, `${file} format`);
    t.equal(media.width, width, `${file} width`);
    t.ok(Math.abs(media.height - height) <= 1, `${file} height ${media.height}`);
    t.equal(media.alt, '');
    const formats = format === 'webp' ? ['webp'] : ['webp', format];
    t.same(
      media.variants.map((v: { width: number; format: string }) => `${v.width}.${v.format}`),
      widths.flatMap((w) => formats.map((f) => `${w}.${f}`)),
      `${file} variants`,
    );
    // Hashed names under the site's media path.
    t.match(pathOf(media.url), new RegExp(`^/sites/[a-z0-9-]+/media/${media.id}/[a-z0-9-]+-[0-9a-f]{12}\\.(jpg|png|webp|avif|gif)$`));
    let total = 0;
    for (const stored of [{ url: media.url, width: media.width, format: media.format }, ...media.variants]) {
      const res = await fetchPublic(ctx, stored.url);
      t.equal(res.statusCode, 200, stored.url);
      t.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
      t.equal(res.headers['content-type'], `image/${stored.format}`);
      const meta = await sharp(res.rawPayload).metadata();
      t.equal(meta.width, stored.width, `${stored.url} is ${stored.width} wide`);
      t.equal(meta.format === 'heif' ? 'avif' : meta.format, stored.format);
      total += res.rawPayload.length;
    }
    t.equal(media.sizeBytes, total, `${file}: sizeBytes counts every stored file`);
  }
  // The animation keeps its frames.
  const gif = (await ctx.call({ method: 'GET', url: '/api/v1/media?limit=1' })).json().data.items[0];
  t.equal((await sharp((await fetchPublic(ctx, gif.url)).rawPayload).metadata()).pages, 3, 'the GIF keeps its 3 frames');
});

t.test('the EXIF orientation is applied and every metadata (GPS, camera, serial) removed', async (t) => {
  const ctx = await buildTestApp(t);
  const before = await exifr.parse(image('rotated-gps.jpg'), { gps: true, tiff: true, exif: true });
  t.ok(before.latitude && before.SerialNumber, 'the fixture has GPS and a serial number');
  const res = await upload(ctx, 'holiday.jpg', image('rotated-gps.jpg'));
  t.equal(res.statusCode, 201);
  const { media } = res.json().data;
  t.equal(media.width, 800, 'stored 1200 x 800 with orientation 6: upright it is 800 wide');
  t.equal(media.height, 1200);
  t.same(media.variants.map((v: { width: number }) => v.width), [600, 600]);
  for (const url of [media.url, ...media.variants.map((v: { url: string }) => v.url)]) {
    const bytes = (await fetchPublic(ctx, url)).rawPayload;
    const meta = await sharp(bytes).metadata();
    t.notOk(meta.exif, `${url}: no EXIF block`);
    t.notOk(meta.orientation && meta.orientation !== 1, 'no orientation left to apply');
    const after = await exifr.parse(bytes, { gps: true, tiff: true, exif: true }).catch(() => undefined);
    t.notOk(after?.latitude, 'no GPS position');
    t.notOk(after?.SerialNumber, 'no serial number');
    t.notOk(after?.Make, 'no camera make');
    t.notOk(bytes.includes(Buffer.from('Jane Photographer')), 'no artist');
    t.notOk(bytes.includes(Buffer.from('SN-998877')), 'no serial anywhere in the bytes');
  }
  // Upright in pixels too: the stored picture's top-left came from the original's bottom-left.
  const upright = await sharp((await fetchPublic(ctx, media.url)).rawPayload).raw().toBuffer({ resolveWithObject: true });
  t.equal(upright.info.width, 800);
});

t.test('a pixel bomb, a truncated file, an SVG and a non-image are refused, leaving nothing', async (t) => {
  const ctx = await buildTestApp(t);
  const bomb = await upload(ctx, 'bomb.png', image('pixel-bomb.png'));
  t.equal(bomb.statusCode, 413);
  t.equal(bomb.json().error.code, 'IMAGE_TOO_LARGE');
  t.match(bomb.json().error.message, /20000 x 20000 pixels: more than the 50 megapixel limit/);

  const truncated = await upload(ctx, 'cut.jpg', image('truncated.jpg'));
  t.equal(truncated.statusCode, 422);
  t.equal(truncated.json().error.code, 'INVALID_IMAGE');

  const svg = await upload(ctx, 'drawing.svg', image('drawing.svg'));
  t.equal(svg.statusCode, 415);
  t.equal(svg.json().error.code, 'UNSUPPORTED_FILE_TYPE');
  t.match(svg.json().error.message, /SVG/);
  // Named as a JPEG, an SVG is still an SVG.
  t.equal((await upload(ctx, 'drawing.jpg', image('drawing.svg'))).statusCode, 415);
  t.equal((await upload(ctx, 'notes.png', 'just some text, not an image')).statusCode, 415);
  t.equal((await upload(ctx, 'empty.png', Buffer.alloc(0))).statusCode, 400);

  t.equal((await ctx.call({ method: 'GET', url: '/health', key: null })).statusCode, 200, 'the service answers');
  t.same(storedFiles(ctx.dataDir), [], 'nothing stored, no temporary file left');
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/media' })).json().data.pagination.total, 0);
  // And it still takes a good image.
  t.equal((await upload(ctx, 'small.jpg', image('small.jpg'))).statusCode, 201);
});

t.test('an image past 20 MiB is refused with 413', async (t) => {
  const ctx = await buildTestApp(t);
  const big = Buffer.concat([image('small.jpg'), Buffer.alloc(20 * 1024 * 1024)]);
  const res = await upload(ctx, 'big.jpg', big);
  t.equal(res.statusCode, 413);
  t.equal(res.json().error.code, 'FILE_TOO_LARGE');
  t.same(storedFiles(ctx.dataDir), []);
});

t.test('images count in the site storage quota', async (t) => {
  const ctx = await buildTestApp(t, { SITE_STORAGE_QUOTA_MB: '1' });
  const first = await upload(ctx, 'photo.webp', image('photo.webp'));
  t.equal(first.statusCode, 201);
  // Each copy stores the same bytes: as many fit as the quota holds, and the next is refused.
  const size: number = first.json().data.media.sizeBytes;
  const fitting = Math.floor((1024 * 1024) / size);
  t.ok(fitting >= 1 && fitting < 10, `${size} bytes an image`);
  for (let n = 1; n < fitting; n++) t.equal((await upload(ctx, 'photo.webp', image('photo.webp'))).statusCode, 201);
  const refused = await upload(ctx, 'photo.webp', image('photo.webp'));
  t.equal(refused.statusCode, 413);
  t.equal(refused.json().error.code, 'QUOTA_EXCEEDED');
  t.match(refused.json().error.message, /storage quota \(knowledge files, their index and images\)/);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/media' })).json().data.pagination.total, fitting);
});

t.test('list, get, alt text, another site, delete', async (t) => {
  const ctx = await buildTestApp(t);
  const ids: string[] = [];
  for (const file of ['small.jpg', 'photo.png', 'animated.gif']) ids.push((await upload(ctx, file, image(file))).json().data.media.id);

  const page = (await ctx.call({ method: 'GET', url: '/api/v1/media?page=1&limit=2' })).json().data;
  t.same(page.pagination, { page: 1, limit: 2, total: 3, pages: 2 });
  t.same(page.items.map((m: { id: string }) => m.id), [ids[2], ids[1]], 'newest first');

  const patched = await ctx.call({ method: 'PATCH', url: `/api/v1/media/${ids[0]}`, payload: { alt: '  A cup of coffee  ' } });
  t.equal(patched.statusCode, 200);
  t.equal(patched.json().data.media.alt, 'A cup of coffee');
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/media/${ids[0]}` })).json().data.media.alt, 'A cup of coffee');
  t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/media/${ids[0]}`, payload: { alt: 'x'.repeat(1001) } })).statusCode, 400);
  t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/media/${ids[0]}`, payload: { title: 'x' } })).statusCode, 400);

  const other = await ctx.addSite('Other');
  for (const method of ['GET', 'DELETE'] as const) {
    t.equal((await ctx.call({ method, url: `/api/v1/media/${ids[0]}`, key: other.key })).statusCode, 404, `${method} of another site's image`);
  }
  t.equal((await ctx.call({ method: 'PATCH', url: `/api/v1/media/${ids[0]}`, key: other.key, payload: { alt: 'mine' } })).statusCode, 404);
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/media/not-an-id' })).statusCode, 404);

  const media = (await ctx.call({ method: 'GET', url: `/api/v1/media/${ids[1]}` })).json().data.media;
  const deleted = await ctx.call({ method: 'DELETE', url: `/api/v1/media/${ids[1]}` });
  t.equal(deleted.statusCode, 200);
  t.same(deleted.json().data, { message: 'Image deleted successfully', mediaId: ids[1], site: ctx.site });
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/media/${ids[1]}` })).statusCode, 404);
  t.equal((await fetchPublic(ctx, media.url)).statusCode, 404, 'its files are gone');
  t.notOk(storedFiles(ctx.dataDir).some((file) => file.includes(ids[1]!)));
  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/media/${ids[1]}` })).statusCode, 404);
  // The public route serves only stored names, never a path elsewhere.
  t.equal((await ctx.call({ method: 'GET', url: pathOf(media.url).replace(/[^/]+$/, '..%2F..%2Fblog.db'), key: null })).statusCode, 404);
});
