import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The compiled form of a project file that a test runs as a process of its own: `src/server.ts`
 * gives dist/src/server.js. Compiled before the tests by .taprc's `before`
 * (scripts/build-for-tests.mjs, the same build as `npm run build`), so that a child starts as the
 * service does in production, in about a second, instead of compiling every module again
 * through the TypeScript loader the test files run under (several seconds per process).
 */
export function built(file: string): string {
  const compiled = path.join(projectRoot, 'dist', file.replace(/\.ts$/, '.js'));
  if (!fs.existsSync(compiled)) {
    throw new Error(`${path.relative(projectRoot, compiled)} is missing: run the tests with tap (.taprc's \`before\` builds it) or run npm run build`);
  }
  return compiled;
}

/** Node's arguments to run a compiled file as a process; its stack traces name the TypeScript lines. */
export function nodeArgs(file: string): string[] {
  return ['--enable-source-maps', built(file)];
}
