import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

/**
 * A compile step kept for the life of the process, by the schema's JSON text. Every app is
 * built with the same route schemas (the tests and benchmarks build hundreds of apps in one
 * process), and compiling them (Ajv validators, fast-json-stringify serializers) was most of
 * the time building an app took. A compiled function depends only on its schema's JSON: the
 * schemas hold no functions.
 */
export function compiledOnce<T>(compile: (schema: object) => T): (schema: object) => T {
  const byText = new Map<string, T>();
  return (schema) => {
    const text = JSON.stringify(schema);
    let compiled = byText.get(text);
    if (compiled === undefined) {
      compiled = compile(schema);
      byText.set(text, compiled);
    }
    return compiled;
  };
}

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;

const serializerCompilers = new Map<string, ReturnType<SerializerFactory>>();
const buildSerializers = SerializerSelector();

/**
 * Fastify's own response serializers (fast-json-stringify, through its compiler), each compiled
 * once per process for a given set of shared schemas and options.
 */
export const sharedSerializers: SerializerFactory = (externalSchemas, options) => {
  const key = JSON.stringify([externalSchemas, options]);
  let compiler = serializerCompilers.get(key);
  if (compiler === undefined) {
    const build = buildSerializers(externalSchemas as never, options as never);
    const bySchema = new Map<string, ReturnType<typeof build>>();
    compiler = (route) => {
      const text = JSON.stringify(route.schema);
      let serialize = bySchema.get(text);
      if (serialize === undefined) {
        serialize = build(route as never);
        bySchema.set(text, serialize);
      }
      return serialize;
    };
    serializerCompilers.set(key, compiler);
  }
  return compiler;
};
