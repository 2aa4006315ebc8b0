import tap from 'tap';
import { compiledOnce, compileEveryRouteSchema, onFirstCall, sharedSerializers, type Validator } from '../../src/compiled-once.js';
import { loadedOnFirstUse } from '../../src/load-on-use.js';
import { buildTestApp } from '../helpers/app.js';

tap.test('a schema is compiled once per JSON text, and different schemas each get their own', async (t) => {
  const compiled: string[] = [];
  const compile = compiledOnce((schema: object) => {
    compiled.push(JSON.stringify(schema));
    return { schema };
  });
  const first = compile({ type: 'object', properties: { title: { type: 'string' } } });
  // Another object with the same text (a route plugin builds its schema literal again for every app).
  const again = compile({ type: 'object', properties: { title: { type: 'string' } } });
  const other = compile({ type: 'object', properties: { title: { type: 'number' } } });
  t.equal(again, first, 'the same text: the same compiled function');
  t.not(other, first, 'another schema: compiled on its own');
  t.equal(compiled.length, 2);
});

tap.test('serializers: shared per schema and shared schemas; each serializes by its own schema', async (t) => {
  const shared = { Site: { $id: 'Site', type: 'object', properties: { name: { type: 'string' } } } };
  const route = (schema: object) => ({ schema, method: 'GET', url: '/x', httpStatus: '200' });
  const schema = { type: 'object', properties: { site: { $ref: 'Site#' }, n: { type: 'integer' } } };
  const a = sharedSerializers(shared, {})(route(schema) as never);
  const b = sharedSerializers(structuredClone(shared), {})(route(structuredClone(schema)) as never);
  t.equal(b, a, 'a second app with the same schemas gets the compiled serializer');
  t.equal(a({ site: { name: 'Notes', secret: 'x' }, n: 2.7, extra: true }), '{"site":{"name":"Notes"},"n":2}', 'only the schema’s fields, as fast-json-stringify writes them');
  const other = sharedSerializers(shared, {})(route({ type: 'object', properties: { n: { type: 'string' } } }) as never);
  t.equal(other({ n: 3 }), '{"n":"3"}');
  const otherShared = sharedSerializers({ Site: { $id: 'Site', type: 'object', properties: { id: { type: 'string' } } } }, {})(route(schema) as never);
  t.equal(otherShared({ site: { name: 'Notes', id: 's1' }, n: 1 }), '{"site":{"id":"s1"},"n":1}', 'other shared schemas: compiled again');
});

tap.test('a validator is compiled on its first call, once, and passes on what its compiled function says', async (t) => {
  let compiles = 0;
  const validate = onFirstCall(() => {
    compiles++;
    const compiled: Validator = (data) => {
      const valid = typeof data === 'string';
      compiled.errors = valid ? null : [{ keyword: 'type', instancePath: '', schemaPath: '#/type', params: { type: 'string' }, message: 'must be string' }];
      return valid;
    };
    return compiled;
  });
  t.equal(compiles, 0, 'nothing compiled before the first call');
  t.equal(validate.errors, null);
  t.equal(validate(3), false);
  t.match(validate.errors, [{ keyword: 'type', message: 'must be string' }], 'the errors of the call that failed');
  t.equal(validate('three'), true);
  t.equal(validate.errors, null, 'cleared by a call that passed');
  t.equal(compiles, 1, 'compiled once');

  const broken = onFirstCall(() => {
    throw new Error('schema is invalid');
  });
  t.throws(() => broken({}), /schema is invalid/, "a schema that does not compile fails its route's first request");
});

tap.test('a serializer is compiled on its first use', async (t) => {
  const route = { schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }, method: 'GET', url: '/lazy', httpStatus: '200' };
  // A reference to a shared schema that does not exist: fast-json-stringify refuses it when it compiles.
  const missing = { schema: { type: 'object', properties: { site: { $ref: 'Nowhere#' } } }, method: 'GET', url: '/lazy', httpStatus: '200' };
  const serializers = sharedSerializers({}, {});
  const broken = serializers(missing as never);
  t.throws(() => broken({ site: {} }), 'compiled, and refused, on first use');
  t.equal(serializers(route as never)({ n: 4.2 }), '{"n":4}');
});

tap.test("an Ajv validator gets Fastify's context; a body validator is called with the data alone", async (t) => {
  const seen: unknown[][] = [];
  const make = () => {
    const compiled: Validator = (...args: unknown[]) => {
      seen.push(args);
      return true;
    };
    return compiled;
  };
  const ajvLike = onFirstCall(make, { withContext: true });
  const plain = onFirstCall(make);
  t.ok(ajvLike.schemaEnv, 'Fastify passes the request as the data parent');
  t.notOk(plain.schemaEnv);
  const context = { instancePath: '', parentData: {}, parentDataProperty: 'query', rootData: {}, dynamicAnchors: {} };
  ajvLike({ a: '1' }, context);
  plain({ b: 2 }, context);
  t.same(seen, [[{ a: '1' }, context], [{ b: 2 }]]);
});

tap.test("every route schema of the service compiles", async (t) => {
  compileEveryRouteSchema();
  await buildTestApp(t);
  const compiled = compileEveryRouteSchema();
  // Some 150 routes, each with a body, query, params or responses (identical schemas compiled once).
  t.ok(compiled > 80, `${compiled} distinct validators and serializers compiled`);
  t.equal(compileEveryRouteSchema(), 0, 'none left');
});

tap.test('a library loaded on first use: one load shared by its callers, and a failed one tried again', async (t) => {
  let loads = 0;
  let fail = true;
  const library = loadedOnFirstUse(async () => {
    loads++;
    if (fail) throw new Error('EMFILE: too many open files');
    return { loaded: loads };
  });
  t.equal(loads, 0, 'nothing loaded before the first call');
  await t.rejects(library(), /EMFILE/);
  fail = false;
  const [a, b] = await Promise.all([library(), library()]);
  t.equal(a, b, 'callers at once share one load');
  t.same(a, { loaded: 2 }, 'the failed load was not kept');
  t.equal(await library(), a);
  t.equal(loads, 2);
});
