import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifySchemaValidationError, FastifyServerOptions } from 'fastify';

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

/** A validator as Fastify calls it: false when the data fails, and then `errors` says why. */
export type Validator = ((data: unknown) => boolean) & { errors?: FastifySchemaValidationError[] | null };

/**
 * A route's validator compiled on the route's first request, not when the app is built: the
 * service has some 150 routes, a process uses a few of them (a test) or spreads its first
 * requests over time (a server), and compiling them all took about half a second of every
 * start. A schema Ajv cannot compile now fails its route's first request rather than the start:
 * the tests send every operation of the OpenAPI document valid and invalid requests
 * (test/app/fuzz.test.ts), which compiles every route's validators and serializers.
 */
export function onFirstCall(compile: () => Validator): Validator {
  let compiled: Validator | undefined;
  const validate: Validator = (data) => {
    compiled ??= compile();
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  };
  validate.errors = null;
  return validate;
}

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;

const serializerCompilers = new Map<string, ReturnType<SerializerFactory>>();
const buildSerializers = SerializerSelector();

/**
 * Fastify's own response serializers (fast-json-stringify, through its compiler), each compiled
 * once per process for a given set of shared schemas and options, on its first use.
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
        // Compiled on the route's first response (see onFirstCall).
        let compiled: ReturnType<typeof build> | undefined;
        serialize = (data: unknown) => (compiled ??= build(route as never))(data);
        bySchema.set(text, serialize);
      }
      return serialize;
    };
    serializerCompilers.set(key, compiler);
  }
  return compiler;
};
