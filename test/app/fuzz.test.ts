/**
 * A property-based test over the OpenAPI document's operations: requests built from each
 * operation's own schemas (valid, then mutated into invalid, hostile or cross-site ones), and
 * three things that must hold for every answer: no 5xx, the error envelope (with X-Request-Id)
 * on every error, and a success that matches the schema declared for its status.
 *
 * A fixed seed and a modest number of runs here; `npm run fuzz` runs many more
 * (FUZZ_RUNS, FUZZ_SEED).
 */
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import t from 'tap';
import { buildTestApp } from '../helpers/app.js';

type Schema = Record<string, unknown> & {
  type?: string;
  enum?: unknown[];
  nullable?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  $ref?: string;
};
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}

const RUNS = Number(process.env.FUZZ_RUNS ?? 600);
// `random`: a new seed each run (printed with any failure, to replay it).
const SEED = process.env.FUZZ_SEED === 'random' ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED ?? 20261125);

/** The document's schemas with their `$ref`s to components replaced by the components. */
function deref(schema: unknown, components: Record<string, Schema>): Schema {
  if (Array.isArray(schema)) return schema.map((item) => deref(item, components)) as unknown as Schema;
  if (schema === null || typeof schema !== 'object') return schema as Schema;
  const ref = (schema as Schema).$ref;
  if (typeof ref === 'string') return deref(components[ref.replace('#/components/schemas/', '')], components);
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, deref(value, components)])) as Schema;
}

// Strings a hostile client sends: traversal, markup, SQL, control and bidi characters, lone surrogates.
const HOSTILE = fc.constantFrom('../../etc/passwd', '<script>alert(1)</script>', "' or 1=1 --", '\u0000', '\u202e', '\ud800', '%00', '//evil.test', '😀'.repeat(50), 'a'.repeat(5000), '', ' ', '{"__proto__":{"x":1}}', '2031-06-30T23:59:60Z', '2026-02-30T10:00:00Z');

/** Values that satisfy a schema (within small sizes), as far as a generator can tell. */
function valid(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  const nullable = (arbitrary: fc.Arbitrary<unknown>) => (schema.nullable ? fc.oneof(arbitrary, fc.constant(null)) : arbitrary);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((alternative) => valid(alternative, depth + 1)));
  switch (schema.type) {
    case 'string': {
      if (schema.format === 'uuid') return nullable(fc.uuid({ version: 4 }));
      if (schema.format === 'date-time') return nullable(fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()));
      const minLength = (schema.minLength as number | undefined) ?? 0;
      const maxLength = Math.max(minLength, Math.min((schema.maxLength as number | undefined) ?? 40, 40));
      const text = fc.oneof({ weight: 3, arbitrary: fc.string({ minLength, maxLength, unit: fc.constantFrom(...'abcdefghij -_') }) }, { weight: 1, arbitrary: fc.string({ minLength, maxLength, unit: 'binary' }) });
      return nullable(text);
    }
    case 'integer':
      return nullable(fc.integer({ min: (schema.minimum as number | undefined) ?? -1000, max: Math.min((schema.maximum as number | undefined) ?? 1000, 1000) }));
    case 'number':
      return nullable(fc.double({ min: (schema.minimum as number | undefined) ?? -1000, max: (schema.maximum as number | undefined) ?? 1000, noNaN: true }));
    case 'boolean':
      return nullable(fc.boolean());
    case 'array':
      return nullable(fc.array(depth > 3 ? fc.constant('x') : valid(schema.items ?? {}, depth + 1), { minLength: (schema.minItems as number | undefined) ?? 0, maxLength: Math.min((schema.maxItems as number | undefined) ?? 3, 3) }));
    case 'object': {
      const properties = schema.properties ?? {};
      const model = Object.fromEntries(Object.entries(properties).map(([key, property]) => [key, valid(property, depth + 1)]));
      return nullable(fc.record(model, { requiredKeys: (schema.required ?? []).filter((key) => key in properties) }));
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A valid value, or one mutated out of its schema: another type, a hostile string, anything. */
const value = (schema: Schema) => fc.oneof({ weight: 3, arbitrary: valid(schema) }, { weight: 1, arbitrary: HOSTILE }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) });

/** A path segment: percent-encoded, and a lone surrogate as the invalid UTF-8 it would be. */
const segment = (text: string) => {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
};

const asText = (item: unknown) => (typeof item === 'string' ? item : JSON.stringify(item) ?? '');

t.test('every operation: no 5xx, the envelope on every error, successes as declared', async (t) => {
  const ctx = await buildTestApp(t, { RATE_LIMIT_AUTH_FAIL_MAX: '0' }, { jobs: { autoStart: false } });
  const other = await ctx.addSite('Other Site');
  const document = (await ctx.call({ method: 'GET', url: '/docs/json', key: null })).json();
  const components = document.components.schemas as Record<string, Schema>;

  // Real ids of both sites, so cross-site and existing resources are tried too.
  const mine = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Mine', isDraft: false } })).json().data.post;
  const theirs = (await ctx.call({ method: 'POST', url: '/api/v1/posts', payload: { title: 'Theirs', isDraft: false }, key: other.key })).json().data.post;
  const hook = (await ctx.call({ method: 'POST', url: '/api/v1/webhooks', payload: { url: 'https://example.com/hook', events: ['post.published'] } })).json().data?.webhook;
  const known = [mine.id, theirs.id, mine.slug, theirs.slug, 'my-blog', 'other-site', hook?.id].filter(Boolean) as string[];

  const ajv = addFormats.default(new Ajv.default({ strict: false, allErrors: true, formats: { binary: true } }));
  const validators = new Map<string, ValidateFunction>();
  const validatorFor = (key: string, schema: Schema) => {
    let validate = validators.get(key);
    if (!validate) validators.set(key, (validate = ajv.compile(schema)));
    return validate;
  };

  const operations = Object.entries(document.paths as Record<string, Record<string, Operation>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation: deref(operation, components) as unknown as Operation })),
  );
  t.ok(operations.length >= 30, `${operations.length} operations`);

  const byKey = new Map(operations.map((op) => [`${op.method} ${op.path}`, op]));
  const request = fc
    .constantFrom(...byKey.keys())
    .chain((opKey) => {
      const op = byKey.get(opKey)!;
      const parameters = op.operation.parameters ?? [];
      const pathParams = parameters.filter((p) => p.in === 'path');
      const query = parameters.filter((p) => p.in === 'query');
      const bodySchema = op.operation.requestBody?.content['application/json']?.schema;
      return fc.record({
        op: fc.constant(opKey),
        path: fc.record(Object.fromEntries(pathParams.map((p) => [p.name, fc.oneof(fc.constantFrom(...known), valid(p.schema).map(asText), HOSTILE)]))),
        query: fc.record(Object.fromEntries(query.map((p) => [p.name, value(p.schema).map(asText)])), { requiredKeys: [] }),
        body: bodySchema ? fc.option(value(bodySchema), { nil: undefined, freq: 8 }) : fc.constant(undefined),
        rawBody: fc.option(fc.constantFrom('{', '[]', 'null', '{"title":', '\u0000', `${'['.repeat(5000)}${']'.repeat(5000)}`), { nil: undefined, freq: 10 }),
        key: fc.constantFrom<'mine' | 'other' | 'none' | 'bad'>('mine', 'mine', 'mine', 'other', 'none', 'bad'),
        idempotencyKey: fc.option(fc.constantFrom('fuzz-1', 'fuzz-2', ' '), { nil: undefined, freq: 4 }),
      });
    });

  let sent = 0;
  await fc.assert(
    fc.asyncProperty(request, async ({ op: opKey, path, query, body, rawBody, key, idempotencyKey }) => {
      sent++;
      const op = byKey.get(opKey)!;
      const url =
        op.path.replace(/\{(\w+)\}/g, (_all, name: string) => segment((path as Record<string, string>)[name] ?? 'x')) +
        (Object.keys(query).length ? `?${new URLSearchParams(query as Record<string, string>)}` : '');
      const headers: Record<string, string> = {};
      if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
      const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
      if (payload !== undefined) headers['content-type'] = 'application/json';
      const res = await ctx.call({
        method: op.method as 'GET',
        url,
        payload,
        headers,
        key: key === 'mine' ? undefined : key === 'other' ? other.key : key === 'bad' ? 'blog_not-a-key-0123456789abcdefghij' : null,
      });
      const what = `${op.method} ${url} (${payload?.slice(0, 200)}) -> ${res.statusCode} ${res.body.slice(0, 300)}`;
      if (res.statusCode >= 500) throw new Error(`5xx: ${what}`);
      const declared = op.operation.responses[String(res.statusCode)] ?? op.operation.responses[`${String(res.statusCode)[0]}XX`];
      if (!declared) throw new Error(`status not declared: ${what}`);
      if (res.statusCode >= 400) {
        const envelope = res.json();
        if (envelope.success !== false || typeof envelope.error?.code !== 'string' || typeof envelope.error?.message !== 'string') throw new Error(`not the envelope: ${what}`);
        // A replayed answer (Idempotent-Replayed) is the first one, with that request's id.
        const replayed = res.headers['idempotent-replayed'] === 'true';
        if (!res.headers['x-request-id'] || (!replayed && envelope.error.requestId !== res.headers['x-request-id'])) throw new Error(`no X-Request-Id: ${what}`);
        return;
      }
      const schema = declared.content?.['application/json']?.schema;
      if (schema && res.body !== '') {
        const validate = validatorFor(`${op.method} ${op.path} ${res.statusCode}`, schema);
        if (!validate(res.json())) throw new Error(`answer outside its schema: ${ajv.errorsText(validate.errors)}: ${what}`);
      }
    }),
    { seed: SEED, numRuns: RUNS, endOnFailure: true, includeErrorInReport: true },
  );
  t.equal(sent, RUNS, `${sent} requests`);
});
