import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { GeneratorService, type GeneratorStatus } from '../src/generation/service.js';
import type { Generator } from '../src/generation/types.js';

/** The generator the app writes posts with, and how it reports itself to /ready. */
export interface AppGenerator extends Pick<Generator, 'generate'> {
  status(): Promise<GeneratorStatus>;
}

declare module 'fastify' {
  interface FastifyInstance {
    generator: AppGenerator;
  }
}

/** Chooses Ollama or the builtin composer as GENERATOR says; tests may pass their own. */
export default fp(
  async function generatorPlugin(app: FastifyInstance, opts: { generator?: AppGenerator }) {
    app.decorate('generator', opts.generator ?? new GeneratorService(app.config, app.log));
  },
  { name: 'generator', dependencies: ['db'] },
);
