/**
 * Images in an S3-compatible bucket (STORAGE_URL=s3://...), against a real s3rver on loopback:
 * every file of an image lands under the prefix and `<site_id>/media/<id>/`, the public route
 * streams them from the bucket, a delete removes them, and a store that cannot be reached
 * refuses the upload with 503 leaving no row.
 */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { buildTestApp, fixturesDir, type TestApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';
import { S3_CREDENTIALS, startS3 } from '../helpers/s3.js';

const upload = (ctx: TestApp, file: string) => {
  const form = multipart([{ name: 'file', filename: file, content: fs.readFileSync(path.join(fixturesDir, 'images', file)) }]);
  return ctx.call({ method: 'POST', url: '/api/v1/media', payload: form.payload, headers: form.headers });
};

t.test('images are stored in the bucket, served from it and deleted from it', async (t) => {
  const s3 = await startS3(t);
  const ctx = await buildTestApp(t, { ...s3.env, ...S3_CREDENTIALS });
  const res = await upload(ctx, 'photo.png');
  t.equal(res.statusCode, 201);
  const { media } = res.json().data;
  const files = [media.url, ...media.variants.map((v: { url: string }) => v.url)].map((url: string) => url.slice(url.lastIndexOf('/') + 1));
  const keys = (await s3.keys()).filter((key) => key.includes('/media/')).sort();
  t.same(keys, files.map((file) => `${s3.prefix}/${ctx.site.id}/media/${media.id}/${file}`).sort(), 'every file under the prefix and the site');
  t.notOk(fs.existsSync(path.join(ctx.dataDir, 'storage', ctx.site.id)), 'nothing of the image under DATA_DIR');

  const served = await ctx.call({ method: 'GET', url: new URL(media.url).pathname, key: null });
  t.equal(served.statusCode, 200);
  t.equal(served.headers['content-type'], 'image/png');
  t.equal(served.headers['cache-control'], 'public, max-age=31536000, immutable');
  t.same(served.rawPayload, await s3.read(keys.find((key) => key.endsWith('.png') && !/-\d+\.png$/.test(key))!));
  t.equal((await sharp(served.rawPayload).metadata()).width, 700);

  t.equal((await ctx.call({ method: 'DELETE', url: `/api/v1/media/${media.id}` })).statusCode, 200);
  t.same((await s3.keys()).filter((key) => key.includes('/media/')), [], 'the objects are gone');
  t.equal((await ctx.call({ method: 'GET', url: new URL(media.url).pathname, key: null })).statusCode, 404);

  // The store goes away: the upload is refused with 503 and leaves no row.
  await s3.stop();
  const refused = await upload(ctx, 'small.jpg');
  t.equal(refused.statusCode, 503);
  t.equal(refused.json().error.code, 'STORAGE_UNAVAILABLE');
  t.equal((await ctx.call({ method: 'GET', url: '/api/v1/media' })).json().data.pagination.total, 0);
  await s3.start();
  t.equal((await upload(ctx, 'small.jpg')).statusCode, 201, 'back once the store is');
});
