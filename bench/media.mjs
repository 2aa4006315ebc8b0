// npm run bench:media: what an image costs the server, and what it costs readers meanwhile.
//
// Starts the built server on a fresh data folder, makes a 12-megapixel photo-like JPEG
// (4,000 x 3,000, gradient and noise, ~5 MB) with sharp, then:
//   1. uploads it 5 times, one after another: the upload's time (receiving, checks, rotation,
//      the original at 2,000 px and 6 variants, storing) and the server's peak memory (VmHWM)
//      before and after;
//   2. GET of a published post page with a feature image: autocannon (10 connections,
//      BENCH_DURATION s, default 5) idle, then while 10 uploads of the 12-megapixel JPEG are in
//      flight (one site, so they are processed one after another: the queue is busy all run);
//      p99 of both and their ratio. Alternated twice (idle, busy, busy, idle); medians.
// Other work on this machine skews absolute figures: compare the ratio.

import sharp from 'sharp';
import {
  apiClient, cannon, makeApiKey, median, multipartFile, peakRssMb, printTable, request, round, rssMb, runBench, startServer, tempDir,
} from './lib.mjs';

const DURATION = Math.min(Math.max(Number(process.env.BENCH_DURATION) || 5, 2), 20);
const UPLOADS_AT_ONCE = 10;

/** A 4,000 x 3,000 JPEG that compresses like a photo (noise over a gradient). */
async function twelveMegapixelJpeg() {
  const width = 4000;
  const height = 3000;
  const raw = Buffer.alloc(width * height * 3);
  let seed = 11;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const noise = seed & 31;
      const i = (y * width + x) * 3;
      raw[i] = ((x * 200) / width + noise) | 0;
      raw[i + 1] = ((y * 200) / height + noise) | 0;
      raw[i + 2] = (120 + noise * 2) | 0;
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
}

await runBench('bench:media', async () => {
  const jpeg = await twelveMegapixelJpeg();
  console.log(`test image: 4000 x 3000 JPEG, ${round(jpeg.length / 1024 / 1024, 2)} MB`);
  const apiKey = makeApiKey();
  const server = await startServer({ dataDir: tempDir(), apiKey });
  const api = apiClient(server, apiKey);
  const upload = async () => {
    const form = multipartFile('photo.jpg', jpeg, 'image/jpeg');
    const res = await api.post('/api/v1/media', form.body, { headers: { 'content-type': form.contentType }, timeoutMs: 120_000 });
    if (res.status !== 201) throw new Error(`upload: ${res.status} ${res.text.slice(0, 300)}`);
    return { ms: res.ms, media: res.json().data.media };
  };

  // 1. Processing time and memory.
  const rssIdle = rssMb(server.pid);
  const peakBefore = peakRssMb(server.pid);
  const times = [];
  let media = null;
  for (let i = 0; i < 5; i++) {
    const done = await upload();
    times.push(done.ms);
    media = done.media;
  }
  printTable('a 12-megapixel JPEG, uploaded and processed (5 in a row)', [
    {
      'median ms': round(median(times), 0),
      'min ms': round(Math.min(...times), 0),
      'max ms': round(Math.max(...times), 0),
      'RSS idle MB': rssIdle,
      'peak RSS before MB': peakBefore,
      'peak RSS after MB': peakRssMb(server.pid),
      files: 1 + media.variants.length,
      'stored KB': round(media.sizeBytes / 1024, 0),
    },
  ]);

  // 2. A post page's p99 while images are processed.
  const created = await api.post('/api/v1/posts', { title: 'A post with a picture', content: 'Words. '.repeat(200), isDraft: false, featureImage: media.id });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text}`);
  const handle = (await api.get('/api/v1/site')).json().data.site.handle;
  const pagePath = `/sites/${handle}/${created.json().data.post.slug}/`;
  if ((await request(server.baseUrl, 'GET', pagePath)).status !== 200) throw new Error('the post page does not answer 200');

  const rows = [];
  for (const busy of [false, true, true, false]) {
    let uploads = null;
    if (busy) {
      uploads = Promise.all(Array.from({ length: UPLOADS_AT_ONCE }, upload));
      // Let the first image reach the processing queue.
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const result = await cannon({ server, title: busy ? 'busy' : 'idle', path: pagePath, connections: 10, duration: DURATION });
    if (uploads) await uploads;
    rows.push({ run: busy ? `while ${UPLOADS_AT_ONCE} images are processed` : 'idle', 'req/s': result.rps, 'p50 ms': result.p50Ms, 'p99 ms': result.p99Ms, non2xx: result.non2xx });
  }
  printTable(`GET ${pagePath} (10 connections, ${DURATION} s a run)`, rows);
  const p99 = (run) => median(rows.filter((row) => row.run.startsWith(run)).map((row) => row['p99 ms']));
  const rps = (run) => median(rows.filter((row) => row.run.startsWith(run)).map((row) => row['req/s']));
  console.log(`\npost page p99: idle ${p99('idle')} ms, while processing ${p99('while')} ms (x${round(p99('while') / p99('idle'), 2)}); req/s x${round(rps('while') / rps('idle'), 2)}`);
}, { timeLimitMs: 400_000 });
