import tap from 'tap';
import { compiledOnce, sharedSerializers } from '../../src/compiled-once.js';

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
