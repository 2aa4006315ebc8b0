// Lighthouse scores of the public site (the index page and a post page) and of the admin UI's
// post list and editor, signed in as the site's owner.
//
// Lighthouse is not a dependency of the project: install it outside the repository and pass
// its folder, and have Chromium installed (Debian: apt-get install -y chromium):
//
//   npm install --prefix /tmp/lh lighthouse@12
//   npm run build && node bench/lighthouse.mjs /tmp/lh/node_modules/lighthouse
//
// Options (after the path): --desktop (Lighthouse's desktop preset; default is its mobile
// emulation with simulated throttling), --json FILE (write both full reports there as JSON).
// Environment: CHROME_PATH (default /usr/bin/chromium), LIGHTHOUSE_PATH (instead of the argument).
//
// Starts the built server on a fresh temporary data folder (a site with a description and 15
// published posts of varied Markdown, written through the API, some with feature images; the
// audited post has one and an image of the media library in its body), launches headless Chromium
// with the flags below, runs Lighthouse's four categories against the index page and a post
// page, and prints the scores, then every audit that did not pass in a category under 1, with
// the elements it names (selector and HTML snippet). Exits 1 if any category is under 0.95.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIXTURES_DIR, makeApiKey, multipartFile, printTable, request, runBench, startServer, tempDir } from './lib.mjs';

const CHROME_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'];
const THRESHOLD = 0.95;
const POSTS = 15;

const args = process.argv.slice(2);
const lighthouseDir = path.resolve(args.find((a) => !a.startsWith('--') && args[args.indexOf(a) - 1] !== '--json') ?? process.env.LIGHTHOUSE_PATH ?? '');
const desktop = args.includes('--desktop');
const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : null;
const chromePath = process.env.CHROME_PATH || '/usr/bin/chromium';

if (!fs.existsSync(path.join(lighthouseDir, 'core', 'index.js'))) {
  console.error('usage: node bench/lighthouse.mjs <lighthouse package folder, e.g. /tmp/lh/node_modules/lighthouse> [--desktop] [--json FILE]');
  process.exit(2);
}
if (!fs.existsSync(chromePath)) {
  console.error(`${chromePath} is missing: apt-get install -y chromium, or set CHROME_PATH`);
  process.exit(2);
}

const { default: lighthouse, desktopConfig } = await import(pathToFileURL(path.join(lighthouseDir, 'core', 'index.js')).href);
const chromeLauncher = await import(pathToFileURL(createRequire(path.join(lighthouseDir, 'package.json')).resolve('chrome-launcher')).href);
const lighthouseVersion = JSON.parse(fs.readFileSync(path.join(lighthouseDir, 'package.json'), 'utf8')).version;

const TOPICS = [
  ['Sourdough starter basics', 'Food & Drink', ['Baking', 'Fermentation']],
  ['A weekend in Lisbon', 'Travel', ['Portugal', 'City Breaks']],
  ['Caching pages per content version', 'Technology', ['Performance', 'Caching']],
  ['Growing tomatoes on a balcony', 'Home & Garden', ['Gardening', 'Vegetables']],
  ['Reading SQLite query plans', 'Technology', ['SQLite', 'Databases']],
];

/** Markdown with the elements the post template has to style: headings, lists, code, quote, links, a table. */
function postContent(i, title) {
  return [
    `${title} is the subject of this note, number ${i + 1} in a series written to check how the public pages look and score.`,
    'It keeps paragraphs short, and links to [the project documentation](https://example.com/docs) and to an [earlier post](../) in passing.',
    '## What you need',
    '- A clear idea of the goal\n- An hour or two of quiet time\n- Patience, and a notebook for **results**',
    '## Step by step',
    '1. Start small and write down what you try.\n2. Change one thing at a time.\n3. Compare with the previous attempt.',
    '> Measure first, then change things. Guessing is slower than it looks.',
    'A command worth remembering, `npm run build`, and a longer example:',
    '```js\nconst started = performance.now();\nawait work();\nconsole.log(`took ${performance.now() - started} ms`);\n```',
    '### Results',
    '| Attempt | Time | Notes |\n| --- | ---: | --- |\n| First | 12 min | too slow |\n| Second | 7 min | better |\n| Third | 5 min | good enough |',
    `That is all for part ${i + 1}. The next part looks at what changed and why it mattered more than expected.`,
  ].join('\n\n');
}

await runBench('bench/lighthouse', async () => {
  const dataDir = tempDir('blog-lighthouse-');
  const apiKey = makeApiKey();
  // PUBLIC_BASE_URL is left at its default, http://127.0.0.1:<port>: Lighthouse loads the pages
  // from that origin, so canonical links and feed URLs point at the pages it audits.
  const server = await startServer({ dataDir, apiKey, env: { SITE_NAME: 'Field Notes' } });
  const auth = { authorization: `Bearer ${apiKey}` };
  const api = async (method, urlPath, body) => {
    const res = await request(server.baseUrl, method, urlPath, { headers: auth, body });
    if (res.status >= 300) throw new Error(`${method} ${urlPath}: ${res.status} ${res.text.slice(0, 300)}`);
    return res.json().data;
  };

  const { site } = await api('PATCH', '/api/v1/site', { description: 'Notes on cooking, travel, gardening and software, written down so they are not forgotten.' });
  // Feature images: every third post has one (the index shows them small), the audited post too,
  // with one of its images in the body as well.
  const images = [];
  for (const file of ['photo.webp', 'photo.png', 'small.jpg']) {
    const form = multipartFile(file, fs.readFileSync(path.join(FIXTURES_DIR, 'images', file)));
    const res = await request(server.baseUrl, 'POST', '/api/v1/media', { headers: { ...auth, 'content-type': form.contentType }, body: form.body });
    if (res.status !== 201) throw new Error(`POST /api/v1/media: ${res.status} ${res.text.slice(0, 300)}`);
    images.push(res.json().data.media);
  }
  let lastSlug = null;
  let lastId = null;
  for (let i = 0; i < POSTS; i++) {
    const last = i === POSTS - 1;
    const image = last ? images[0] : i % 3 === 0 ? images[i % images.length] : null;
    const [topic, category, tags] = TOPICS[i % TOPICS.length];
    const title = `${topic}, part ${Math.floor(i / TOPICS.length) + 1}`;
    const { post } = await api('POST', '/api/v1/posts', {
      title,
      description: `${topic}: what worked, what did not, and what to try next time.`,
      content: last ? `${postContent(i, title)}\n\n![A garden path in the evening](${images[1].url})` : postContent(i, title),
      category,
      tags,
      isDraft: false,
      ...(image ? { featureImage: image.id, featureImageAlt: 'A harbour at sunrise, boats moored along the pier' } : {}),
    });
    lastSlug = post.slug;
    lastId = post.id;
  }

  // The owner's first sign-in, through the setup link the first start printed.
  const setupToken = server.logTail().match(/\/admin\/setup#token=([\w-]+)/)?.[1];
  if (!setupToken) throw new Error('the first start printed no setup link');
  const origin = server.baseUrl;
  const signedIn = await request(server.baseUrl, 'POST', '/api/v1/auth/setup', { headers: { origin: server.baseUrl }, body: { token: setupToken, password: 'lighthouse-owner-password' } });
  if (signedIn.status !== 200) throw new Error(`POST /api/v1/auth/setup: ${signedIn.status} ${signedIn.text.slice(0, 300)}`);
  const cookie = [signedIn.headers['set-cookie']].flat().map((c) => c.split(';')[0]).join('; ');

  const pages = [
    { name: 'index', url: `${origin}/sites/${site.handle}/` },
    { name: 'post', url: `${origin}/sites/${site.handle}/${lastSlug}/` },
    { name: 'admin posts', url: `${origin}/admin/posts` },
    { name: 'admin editor', url: `${origin}/admin/posts/${lastId}` },
  ];
  for (const page of pages) {
    const res = await request(server.baseUrl, 'GET', new URL(page.url).pathname, { headers: { cookie } });
    if (res.status !== 200) throw new Error(`${page.url}: ${res.status}`);
  }

  const chrome = await chromeLauncher.launch({ chromePath, chromeFlags: CHROME_FLAGS, logLevel: 'silent' });
  const reports = {};
  try {
    for (const page of pages) {
      const result = await lighthouse(page.url, { port: chrome.port, output: 'json', logLevel: 'error', onlyCategories: CATEGORIES, extraHeaders: { cookie } }, desktop ? desktopConfig : undefined);
      if (!result?.lhr) throw new Error(`Lighthouse returned nothing for ${page.url}`);
      if (result.lhr.runtimeError) throw new Error(`Lighthouse: ${result.lhr.runtimeError.code} ${result.lhr.runtimeError.message}`);
      reports[page.name] = result.lhr;
    }
  } finally {
    await chrome.kill();
  }

  const first = Object.values(reports)[0];
  console.log(`Lighthouse ${lighthouseVersion}, ${first.environment.hostUserAgent.match(/(Headless)?Chrome\/[\d.]+/)?.[0] ?? 'Chromium'}, ${desktop ? 'desktop' : 'mobile (default)'} preset`);
  printTable(
    'Lighthouse scores',
    pages.map((page) => ({
      page: `${page.name} ${new URL(page.url).pathname}`,
      ...Object.fromEntries(CATEGORIES.map((c) => [c, reports[page.name].categories[c]?.score ?? null])),
    })),
  );

  // Every audit that did not pass in a category under 1 (weight 0 ones too, as hints), so a
  // template fix can start from the audit id and the elements it names.
  let low = 0;
  for (const page of pages) {
    const lhr = reports[page.name];
    for (const category of CATEGORIES) {
      const cat = lhr.categories[category];
      if (cat.score === null || cat.score >= 1) continue;
      if (cat.score < THRESHOLD) low++;
      console.log(`\n${page.name}: ${category} ${cat.score}${cat.score < THRESHOLD ? ` (UNDER ${THRESHOLD})` : ''}; audits that did not pass:`);
      for (const ref of cat.auditRefs) {
        const audit = lhr.audits[ref.id];
        if (audit.score === null || audit.score >= 1 || ['informative', 'notApplicable', 'manual'].includes(audit.scoreDisplayMode)) continue;
        const value = audit.displayValue ? ` (${audit.displayValue})` : '';
        console.log(`  - ${ref.id}: score ${audit.score}, weight ${ref.weight}${value}: ${audit.title}`);
        const items = Array.isArray(audit.details?.items) ? audit.details.items : [];
        for (const item of items.slice(0, 10)) {
          const node = item.node ?? item.relatedNode;
          const url = item.url ?? item.sourceLocation?.url;
          if (node) console.log(`      ${node.selector ?? ''}  ${(node.snippet ?? '').slice(0, 160)}${node.explanation ? `\n        ${node.explanation.replace(/\n/g, '\n        ')}` : ''}`);
          else if (url) console.log(`      ${url}${item.description ? `: ${item.description}` : ''}${item.wastedMs ? ` (${Math.round(item.wastedMs)} ms)` : ''}${item.wastedBytes ? ` (${Math.round(item.wastedBytes)} bytes)` : ''}`);
          for (const sub of (item.subItems?.items ?? []).slice(0, 3)) if (sub.relatedNode) console.log(`        related: ${sub.relatedNode.selector}  ${(sub.relatedNode.snippet ?? '').slice(0, 120)}`);
        }
      }
    }
  }
  if (jsonOut) {
    fs.writeFileSync(jsonOut, JSON.stringify(reports, null, 1));
    console.log(`\nfull reports written to ${jsonOut}`);
  }
  if (low) throw new Error(`${low} category score(s) under ${THRESHOLD}`);
  console.log(`\nall categories >= ${THRESHOLD} on every page`);
}, { timeLimitMs: 300_000 });
