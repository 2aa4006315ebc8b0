import t from 'tap';
import { buildTestApp } from '../helpers/app.js';

// What must not reach a stranger: the data folder, the database, the store, Ollama's address.
const LOCATIONS = ['databaseLocation', 'store'];

t.test('/ready without a key answers the states only; a key or READY_DETAILS=true shows the locations', async (t) => {
  const ctx = await buildTestApp(t, { OLLAMA_HOST: 'http://ollama.internal:11434' });
  for (const headers of [{}, { authorization: 'Bearer blog_not-a-real-key-0123456789' }]) {
    const res = await ctx.call({ method: 'GET', url: '/ready', key: null, headers });
    t.equal(res.statusCode, 200);
    const body = res.json();
    t.match(body, { status: 'ready', details: false, database: 'ok', storage: 'ok', jobs: String, indexing: 'ok', generator: { mode: 'builtin', ollama: { reachable: false } } });
    for (const field of LOCATIONS) t.notOk(field in body, `no ${field}`);
    t.notOk('host' in body.generator.ollama, 'no Ollama host');
    t.notMatch(res.body, ctx.dataDir, 'no path of the data folder');
    t.notMatch(res.body, /ollama\.internal/, 'no OLLAMA_HOST');
  }

  const keyed = (await ctx.call({ method: 'GET', url: '/ready' })).json();
  t.match(keyed, { details: true, databaseLocation: { kind: String }, store: { kind: 'local' }, generator: { ollama: { host: 'http://ollama.internal:11434' } } });

  const open = await buildTestApp(t, { READY_DETAILS: 'true' });
  t.match((await open.call({ method: 'GET', url: '/ready', key: null })).json(), { details: true, databaseLocation: { kind: String }, store: { kind: 'local' } });
});

t.test('/ready with a key it cannot check (the database is gone) still says why: 503, states only', { skip: process.env.TEST_DATABASE === 'postgres' && 'closes the SQLite database' }, async (t) => {
  const ctx = await buildTestApp(t);
  ctx.app.database.close();
  const res = await ctx.call({ method: 'GET', url: '/ready', key: 'blog_unknown-key-0123456789abcdefghij' });
  t.equal(res.statusCode, 503);
  t.match(res.json(), { status: 'not ready', details: false, database: 'unavailable' });
});
