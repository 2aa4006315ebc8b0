import tap from 'tap';
import Fastify from 'fastify';
import { serverOptions } from '../../src/app.js';
import { testConfig } from '../helpers/app.js';

tap.test('a start is not cut off by a per-plugin time limit (migrations take as long as they take)', async (t) => {
  const app = Fastify(serverOptions(testConfig('/nonexistent'), false));
  t.teardown(() => app.close());
  t.equal(app.initialConfig.pluginTimeout, 0);
  // A plugin slower than Fastify's default limit would be, scaled down: the default is what ends such a start.
  const limited = Fastify({ pluginTimeout: 20 });
  t.teardown(() => limited.close());
  limited.register(async () => new Promise((resolve) => setTimeout(resolve, 100)));
  await t.rejects(async () => { await limited.ready(); }, { message: /did not start in time/ });
  app.register(async () => new Promise((resolve) => setTimeout(resolve, 100)));
  await t.resolves(async () => { await app.ready(); });
});
