import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { BOOTSTRAP_KEY, fixturesDir, loggedApp } from '../helpers/app.js';
import { multipart } from '../helpers/multipart.js';

t.test('a public image, and a post page with a comment notice, are sent once: no page rendered after them, nothing logged at error level', async (t) => {
  const { app, text, entries } = await loggedApp(t);
  const handle = (await app.sites.list())[0]!.handle;
  let pagesRendered = 0;
  const page = app.publicPages.page.bind(app.publicPages);
  app.publicPages.page = (...args) => {
    pagesRendered++;
    return page(...args);
  };

  const file = fs.readFileSync(path.join(fixturesDir, 'images', 'photo.webp'));
  const form = multipart([{ name: 'file', filename: 'photo.webp', content: file }]);
  const uploaded = await app.inject({ method: 'POST', url: '/api/v1/media', payload: form.payload, headers: { ...form.headers, authorization: `Bearer ${BOOTSTRAP_KEY}` } });
  t.equal(uploaded.statusCode, 201);
  const media = uploaded.json().data.media as { url: string; variants: { url: string }[] };

  for (const url of [media.url, media.variants[0]!.url]) {
    const res = await app.inject({ method: 'GET', url });
    t.equal(res.statusCode, 200, url);
    t.match(res.headers['content-type'], /^image\//);
    t.equal(res.rawPayload.length, Number(res.headers['content-length']), 'the whole file');
  }
  // A post page with a comment notice is rendered for its request, once too.
  const created = await app.inject({ method: 'POST', url: '/api/v1/posts', headers: { authorization: `Bearer ${BOOTSTRAP_KEY}` }, payload: { title: 'With comments', content: 'Say something.', isDraft: false } });
  const { slug } = created.json().data.post as { slug: string };
  const withNotice = await app.inject({ method: 'GET', url: `/sites/${handle}/${slug}/?comment=pending` });
  t.equal(withNotice.statusCode, 200);
  t.match(withNotice.body, /waits for a moderator/);
  t.equal(withNotice.headers['cache-control'], 'no-store');
  // A reply's log lines are written once its response ends; the one after a second send a moment later.
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(pagesRendered, 0, 'no page rendered after the image or the post with its notice');
  t.equal((await app.inject({ method: 'GET', url: `/sites/${handle}/media/nope/nope.webp` })).statusCode, 404, 'an unknown file is the site\'s 404');
  const log = text();
  t.notMatch(log, /FST_ERR_REP_ALREADY_SENT|Reply was already sent/);
  t.notOk(
    entries().some((entry) => entry.level >= 50),
    'nothing at error level',
  );
});
