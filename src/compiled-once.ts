import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { DataValidationCxt } from 'ajv/dist/types/index.js';
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

/**
 * A validator as Fastify calls it: false when the data fails, and then `errors` says why. With
 * `schemaEnv` set (as on Ajv's own functions), Fastify passes the request as the data's parent.
 */
export type Validator = ((data: unknown, context?: DataValidationCxt) => boolean) & { errors?: FastifySchemaValidationError[] | null; schemaEnv?: unknown };

/** The compile steps of the validators and serializers not tried yet (see compileEveryRouteSchema). */
const notCompiled = new Set<() => unknown>();

/**
 * Compiles at once every route schema the process's apps hold and has not compiled yet, and
 * returns how many. The tests call it on a built app: a schema that does not compile fails them,
 * as it failed every start before compiling waited for each route's first request.
 */
export function compileEveryRouteSchema(): number {
  const steps = [...notCompiled];
  for (const step of steps) step();
  return steps.length;
}

/** `compile` run on the first call of what it makes, once; until then it waits in notCompiled. */
function whenFirstCalled<T>(compile: () => T): () => T {
  let compiled: T | undefined;
  const ensure = () => {
    if (compiled === undefined) {
      // Tried once here: one that fails keeps failing its route's requests, not the next compileEveryRouteSchema.
      notCompiled.delete(ensure);
      compiled = compile();
    }
    return compiled;
  };
  notCompiled.add(ensure);
  return ensure;
}

/**
 * A route's validator compiled on the route's first request, not when the app is built: the
 * service has some 150 routes, a process uses a few of them (a test) or spreads its first
 * requests over time (a server), and compiling them all took about half a second of every
 * start. A schema Ajv cannot compile fails its route's first request rather than the start; the
 * tests compile them all (compileEveryRouteSchema). `withContext`: an Ajv function, which takes
 * Fastify's second argument (`schemaEnv`).
 */
export function onFirstCall(compile: () => Validator, { withContext = false } = {}): Validator {
  const compiled = whenFirstCalled(compile);
  const validate: Validator = (data, context) => {
    const run = compiled();
    const valid = withContext ? run(data, context) : run(data);
    validate.errors = run.errors;
    return valid;
  };
  validate.errors = null;
  if (withContext) validate.schemaEnv = true;
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
        const compiled = whenFirstCalled(() => build(route as never));
        serialize = (data: unknown) => compiled()(data);
        bySchema.set(text, serialize);
      }
      return serialize;
    };
    serializerCompilers.set(key, compiler);
  }
  return compiler;
};
