import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { GeneratorService, type AppGenerator } from '../src/generation/service.js';
import { ReadinessService } from '../src/readiness.js';

declare module 'fastify' {
  interface FastifyInstance {
    generator: AppGenerator;
    readiness: ReadinessService;
  }
}

/** Chooses Ollama or the builtin composer as GENERATOR says (tests may pass their own), and what /ready reports. */
export default fp(
  async function generatorPlugin(app: FastifyInstance, opts: { generator?: AppGenerator }) {
    const generator = opts.generator ?? new GeneratorService(app.config, app.log);
    app.decorate('generator', generator);
    app.addHook('onClose', async () => generator.close?.());
    const readiness = new ReadinessService(app.backend, generator);
    if (app.hasDecorator('indexer')) readiness.watchIndexer(() => app.indexer.status());
    if (app.hasDecorator('objectStore')) readiness.watchStore(app.objectStore);
    // A server restarted on a full disk says so before any write of its own has failed.
    readiness.watchDisk(app.config.dataDir);
    app.decorate('readiness', readiness);
  },
  { name: 'generator', dependencies: ['db'] },
);
