/**
 * Bad input gets a clear 400 (or 415), never silence or a 500: days that do not exist on the
 * stats routes, fields no schema declares in any JSON body, and compressed bodies.
 */
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { closeObjects, editDistance, probableField } from '../../src/unknown-fields.js';
import { buildTestApp } from '../helpers/app.js';

interface Detail {
  path: string;
  message: string;
}

t.test('an impossible day is a 400 on every stats route, with or without the other end', async (t) => {
  const ctx = await buildTestApp(t, {}, { jobs: { autoStart: false } });
  const post = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Counted', isDraft: false } })).json().data.post;
  const routes = ['/api/v1/stats', `/api/v1/stats/posts?ids=${post.id}`, `/api/v1/posts/${post.id}/stats`];
  for (const route of routes) {
    const join = route.includes('?') ? '&' : '?';
    for (const [query, field] of [
      ['to=2031-02-30', 'to'],
      ['from=2031-02-30', 'from'],
      ['to=2030-13-01', 'to'],
      ['from=2030-01-01&to=2030-02-29', 'to'],
      ['from=2029-00-10&to=2030-01-01', 'from'],
    ] as const) {
      const res = await ctx.call({ method: 'GET', url: `${route}${join}${query}` });
      t.equal(res.statusCode, 400, `${route} ${query}: ${res.body}`);
      t.equal(res.json().error.code, 'VALIDATION_ERROR');
      t.same(res.json().error.details.map((d: Detail) => d.path), [`/query/${field}`], `${route} ${query} names ${field}`);
    }
    // The first day a YYYY-MM-DD can say, alone: the default range stops there.
    const earliest = await ctx.call({ method: 'GET', url: `${route}${join}to=0000-01-05` });
    t.equal(earliest.statusCode, 200, earliest.body);
    t.equal(earliest.json().data.from, '0000-01-01');
    // A real day still works, 29 February of a leap year too.
    const leap = await ctx.call({ method: 'GET', url: `${route}${join}to=2028-02-29` });
    t.equal(leap.statusCode, 200, leap.body);
    t.equal(leap.json().data.to, '2028-02-29');
  }
});

t.test('unknown body fields are a 400 naming each, with the field probably meant', async (t) => {
  const ctx = await buildTestApp(t, {}, { jobs: { autoStart: false } });

  // The case: a batch whose defaults say isDraft (a post's field) instead of status.
  const batch = await ctx.call({ method: 'POST', url: '/api/v1/posts/batch', payload: { posts: [{ topic: 'Espresso' }], defaults: { isDraft: false } } });
  t.equal(batch.statusCode, 400, batch.body);
  t.equal(batch.json().error.code, 'VALIDATION_ERROR');
  t.same(batch.json().error.details, [{ path: '/body/defaults/isDraft', message: 'is not a known field: did you mean status?' }]);
  t.match(batch.json().error.message, /\/body\/defaults\/isDraft.*did you mean status/);
  t.equal(await ctx.count('select count(*) as n from jobs'), 0, 'nothing was scheduled');

  // Each unknown field is named, at the root and in nested objects and array items alike.
  const many = await ctx.call({
    method: 'POST',
    url: '/api/v1/posts/batch',
    payload: { posts: [{ topic: 'A', scheduledAt: '2030-01-01T00:00:00Z' }, { topic: 'B', catgory: 'Coffee' }], defaults: { staus: 'PUBLISHED' }, strtDate: '2030-01-01T00:00:00Z', colour: 'red' },
  });
  t.equal(many.statusCode, 400, many.body);
  const details = many.json().error.details as Detail[];
  t.same(
    details.map((d) => d.path).sort(),
    ['/body/colour', '/body/defaults/staus', '/body/posts/0/scheduledAt', '/body/posts/1/catgory', '/body/strtDate'].sort(),
    'every unknown field, nested ones too',
  );
  const said = Object.fromEntries(details.map((d) => [d.path, d.message]));
  t.match(said['/body/defaults/staus'], 'did you mean status?');
  t.match(said['/body/posts/1/catgory'], 'did you mean category?');
  t.match(said['/body/posts/0/scheduledAt'], 'did you mean scheduledFor?');
  t.match(said['/body/strtDate'], 'did you mean startDate?');
  t.notMatch(said['/body/colour'], 'did you mean', 'no guess when nothing is close');
  t.match(said['/body/colour'], /known: .*posts/, 'the known fields are listed instead');

  // Where the document always said additionalProperties: false, and on create and PATCH.
  const post = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Kept' } })).json().data.post;
  const create = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { titel: 'Typo', status: 'PUBLISHED' } });
  t.equal(create.statusCode, 400);
  t.same(
    (create.json().error.details as Detail[]).filter((d) => d.path !== '/body/title').map((d) => [d.path, d.message]),
    [
      ['/body/titel', 'is not a known field: did you mean title?'],
      ['/body/status', 'is not a known field: did you mean isDraft?'],
    ],
  );
  const patch = await ctx.call({ method: 'PATCH', url: `/api/v1/posts/${post.id}`, payload: { title: 'Renamed', isdraft: false } });
  t.equal(patch.statusCode, 400);
  t.match(patch.json().error.details, [{ path: '/body/isdraft', message: 'is not a known field: did you mean isDraft?' }]);
  t.equal((await ctx.call({ method: 'GET', url: `/api/v1/posts/${post.id}` })).json().data.post.title, 'Kept', 'nothing of a refused PATCH was applied');
  const media = await ctx.call({ method: 'PATCH', url: '/api/v1/media/00000000-0000-4000-8000-000000000000', payload: { alt: 'x', unknownField: 1 } });
  t.equal(media.statusCode, 400);
  t.match(media.json().error.details, [{ path: '/body/unknownField' }]);
  // A field name that is no identifier is named as a JSON pointer.
  const odd = await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: { name: 'x', 'a/b~c': 1 } });
  t.equal(odd.statusCode, 400);
  t.match(odd.json().error.details, [{ path: '/body/a~1b~0c' }]);
  // A route that takes no body: a body with fields is refused, an empty one is fine.
  const toggle = await ctx.call({ method: 'PUT', url: `/api/v1/posts/${post.id}`, payload: { isDraft: true } });
  t.equal(toggle.statusCode, 400, toggle.body);
  t.match(toggle.json().error.details, [{ path: '/body/isDraft', message: /takes no body/ }]);
  t.equal((await ctx.call({ method: 'PUT', url: `/api/v1/posts/${post.id}`, payload: {} })).statusCode, 200);
  // Declared fields still pass, with the defaults filled in.
  const fine = await ctx.call({ method: 'POST', url: '/api/v1/posts/batch', payload: { posts: [{ topic: 'Fine' }], defaults: { status: 'PUBLISHED' } } });
  t.equal(fine.statusCode, 202, fine.body);

  // A body with very many unknown fields gets the first ones named, and a count of the rest.
  const flood = await ctx.call({ method: 'PATCH', url: '/api/v1/site', payload: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`field${i}`, i])) });
  t.equal(flood.statusCode, 400);
  t.ok(flood.json().error.details.length <= 25, `${flood.json().error.details.length} details`);
  t.match(flood.json().error.details.at(-1).message, /and \d+ more unknown fields/);
});

t.test('the OpenAPI document says every JSON body takes no other fields', async (t) => {
  const ctx = await buildTestApp(t);
  const document = (await ctx.call({ method: 'GET', url: '/docs/json', key: null })).json();
  const open: string[] = [];
  const walk = (schema: Record<string, unknown> | undefined, where: string) => {
    if (!schema || typeof schema !== 'object') return;
    if (schema.properties && schema.additionalProperties !== false) open.push(where);
    for (const [name, value] of Object.entries((schema.properties as Record<string, Record<string, unknown>>) ?? {})) walk(value, `${where}.${name}`);
    if (schema.items) walk(schema.items as Record<string, unknown>, `${where}[]`);
  };
  let bodies = 0;
  for (const [path, methods] of Object.entries(document.paths as Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Record<string, unknown> }> } }>>)) {
    for (const [method, operation] of Object.entries(methods)) {
      const schema = operation.requestBody?.content['application/json']?.schema;
      if (!schema) continue;
      bodies++;
      walk(schema, `${method.toUpperCase()} ${path}`);
    }
  }
  t.ok(bodies >= 15, `${bodies} JSON bodies`);
  t.same(open, [], 'no open object in any JSON body');
});

t.test('closeObjects, editDistance, probableField', async (t) => {
  t.same(closeObjects({ type: 'object', properties: { a: { type: 'object', properties: {} } } }), {
    type: 'object',
    properties: { a: { type: 'object', properties: {}, additionalProperties: false } },
    additionalProperties: false,
  });
  t.same(closeObjects({ type: 'object', additionalProperties: true }), { type: 'object', additionalProperties: true }, 'an explicit choice is kept');
  t.same(closeObjects({ allOf: [{ type: 'object', properties: { a: {} } }] }), { allOf: [{ type: 'object', properties: { a: {} } }] }, 'allOf parts stay open');
  t.same(closeObjects({ anyOf: [{ type: 'object', properties: {} }, { type: 'null' }] }), { anyOf: [{ type: 'object', properties: {}, additionalProperties: false }, { type: 'null' }] });
  t.equal(editDistance('status', 'staus'), 1);
  t.equal(editDistance('title', 'tilte'), 1, 'swapped neighbours are one edit');
  t.equal(editDistance('Title', 'title'), 0);
  t.equal(probableField('isDraft', ['status', 'category']), 'status');
  t.equal(probableField('isDraft', ['category']), undefined);
  t.equal(probableField('x'.repeat(10_000), ['status']), undefined);
  t.equal(probableField('tagz', ['tags', 'title']), 'tags');
});

t.test('a compressed body is 415 in the envelope, never read as plain JSON', async (t) => {
  const ctx = await buildTestApp(t, {}, { jobs: { autoStart: false } });
  const json = JSON.stringify({ title: 'Compressed' });
  for (const [encoding, payload] of [
    ['gzip', gzipSync(json)],
    // Claimed but not done: still not read, as the client said it was something else.
    ['gzip', Buffer.from(json)],
    ['deflate', Buffer.from(json)],
    ['br', Buffer.from(json)],
    ['identity, gzip', gzipSync(json)],
  ] as const) {
    const res = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload, headers: { 'content-type': 'application/json', 'content-encoding': encoding } });
    t.equal(res.statusCode, 415, `${encoding}: ${res.body}`);
    t.equal(res.json().error.code, 'UNSUPPORTED_MEDIA_TYPE');
    t.match(res.json().error.message, 'Content-Encoding');
    t.equal(res.headers['accept-encoding'], 'identity');
    t.equal(res.json().error.requestId, res.headers['x-request-id']);
  }
  // On an upload too.
  const upload = await ctx.call({ method: 'POST', url: '/api/v1/knowledge', payload: gzipSync('x'), headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-encoding': 'gzip' } });
  t.equal(upload.statusCode, 415);
  t.equal(await ctx.count('select count(*) as n from posts'), 0, 'no post was made');
  // identity is no encoding at all.
  const plain = await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: json, headers: { 'content-type': 'application/json', 'content-encoding': 'identity' } });
  t.equal(plain.statusCode, 201, plain.body);
});
