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

/** A value in about one request of five, otherwise undefined. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });

const asText = (item: unknown) => (typeof item === 'string' ? item : JSON.stringify(item) ?? '');

// Days and times of the right shape that no calendar has: every one must be a 400.
const IMPOSSIBLE_DAYS = ['2031-02-30', '2030-13-01', '2029-00-10', '2030-04-31', '2027-02-29'];
const IMPOSSIBLE_TIMES = ['2031-02-30T10:00:00Z', '2030-13-01T00:00:00Z', '2030-04-31T12:00:00.000Z', '2031-06-30T23:59:60Z'];
const isDaySchema = (schema: Schema) => schema.type === 'string' && typeof schema.pattern === 'string' && schema.pattern.includes('\\d{4}-\\d{2}-\\d{2}');
const isImpossible = (text: string) => [...IMPOSSIBLE_DAYS, ...IMPOSSIBLE_TIMES].some((bad) => text.includes(bad));

/** The schema with every date or time in it allowed only an impossible one. */
function impossibleDates(schema: Schema): Schema {
  if (Array.isArray(schema)) return schema.map(impossibleDates) as unknown as Schema;
  if (schema === null || typeof schema !== 'object') return schema;
  if (schema.format === 'date-time') return { type: 'string', enum: IMPOSSIBLE_TIMES };
  if (isDaySchema(schema)) return { type: 'string', enum: IMPOSSIBLE_DAYS };
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, impossibleDates(value as Schema)])) as Schema;
}

// Names a client might send by mistake: misspelt, another operation's, or made up.
const UNKNOWN_FIELDS = ['unknownField', 'isdraft', 'titel', 'scheduledAt', 'extra', 'a/b'];

/** The JSON pointer of every object in a value (the value itself first when it is one). */
function objectPaths(item: unknown, path = ''): string[] {
  if (Array.isArray(item)) return item.flatMap((entry, i) => objectPaths(entry, `${path}/${i}`));
  if (item === null || typeof item !== 'object') return [];
  return [path, ...Object.entries(item).flatMap(([key, entry]) => objectPaths(entry, `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`))];
}

/** The body with one field added to one of its objects; the field's JSON pointer. */
function withUnknownField(body: unknown, choice: number, field: string): { body: unknown; pointer: string } | undefined {
  const paths = objectPaths(body);
  if (paths.length === 0) return undefined;
  const target = paths[choice % paths.length]!;
  const copy = structuredClone(body) as Record<string, unknown>;
  let node: Record<string, unknown> = copy;
  for (const segment of target.split('/').slice(1)) node = node[segment.replaceAll('~1', '/').replaceAll('~0', '~')] as Record<string, unknown>;
  node[field] = 1;
  return { body: copy, pointer: `/body${target}/${field.replaceAll('~', '~0').replaceAll('/', '~1')}` };
}

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
        // Otherwise valid requests but for one unknown body field, or impossible dates.
        unknownField: sometimes(
          fc.record({
            field: fc.constantFrom(...UNKNOWN_FIELDS),
            choice: fc.nat(),
            body: bodySchema ? valid(bodySchema) : fc.constant({}),
            path: fc.record(Object.fromEntries(pathParams.map((p) => [p.name, fc.constantFrom(...known)]))),
          }),
        ),
        impossible: sometimes(
          fc.record({
            query: fc.record(Object.fromEntries(query.map((p) => [p.name, valid(impossibleDates(p.schema)).map(asText)])), { requiredKeys: [] }),
            body: bodySchema ? valid(impossibleDates(bodySchema)) : fc.constant(undefined),
          }),
        ),
      });
    });

  let sent = 0;
  // How many requests each of the two checks actually judged (a check that never runs proves nothing).
  let unknownNamed = 0;
  let impossibleRefused = 0;
  await fc.assert(
    fc.asyncProperty(request, async (generated) => {
      sent++;
      const { op: opKey } = generated;
      let { path, query, body, rawBody, key, idempotencyKey } = generated;
      const op = byKey.get(opKey)!;
      // One unknown field in a body otherwise valid (an empty one where the operation takes none).
      let unknown: { body: unknown; pointer: string } | undefined;
      const takesJson = Boolean(op.operation.requestBody?.content['application/json']) || (!op.operation.requestBody && ['POST', 'PUT', 'PATCH', 'DELETE'].includes(op.method));
      if (generated.unknownField && takesJson) {
        unknown = withUnknownField(generated.unknownField.body, generated.unknownField.choice, generated.unknownField.field);
        if (unknown) [body, rawBody, path, key, idempotencyKey] = [unknown.body, undefined, generated.unknownField.path, 'mine', undefined];
      }
      let impossible = false;
      if (generated.impossible && !unknown) {
        query = { ...query, ...generated.impossible.query };
        if (generated.impossible.body !== undefined) [body, rawBody] = [generated.impossible.body, undefined];
        impossible = Object.values(generated.impossible.query).some((text) => isImpossible(text as string)) || (generated.impossible.body !== undefined && isImpossible(JSON.stringify(body)));
      }
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
      // Refused before the body is looked at (no key, no right, too many), or a 400 naming the field.
      if (unknown && ![401, 403, 429].includes(res.statusCode)) {
        if (res.statusCode !== 400 || res.json().error?.code !== 'VALIDATION_ERROR') throw new Error(`unknown field ${unknown.pointer} not refused: ${what}`);
        const paths = (res.json().error.details ?? []).map((detail: { path: string }) => detail.path);
        if (!paths.includes(unknown.pointer) && !paths.some((p: string) => p.startsWith('/params'))) throw new Error(`unknown field ${unknown.pointer} not named: ${what}`);
        unknownNamed++;
      }
      if (impossible && res.statusCode < 300) throw new Error(`impossible date accepted: ${what}`);
      if (impossible && res.statusCode === 400) impossibleRefused++;
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
  t.ok(unknownNamed > 0, `${unknownNamed} unknown fields named`);
  t.ok(impossibleRefused > 0, `${impossibleRefused} impossible dates refused`);
});
