// Run by tap before any test file (.taprc's `before`): compiles the service and the helper
// processes the tests start into dist/, incrementally (`tsc -b` finds nothing to do when no
// source changed since the last build). Real-process tests start these compiled files with
// plain node (test/helpers/app.ts, built()), not through the TypeScript loader the test files
// themselves run under: that loader compiles every module again in every process.
//
// Type errors are reported and the tests still run (the emitted JavaScript is complete, as
// under the loader, which only strips types); `npm run typecheck` is the check for types. A
// build that emits nothing (a broken configuration) stops the run.
/* c8 ignore start */
// (tap's coverage records this script too, as the first process it starts: it is no code under test.)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
// tap's process tracking and coverage have nothing to learn from the compiler.
const { NODE_OPTIONS: _options, NODE_V8_COVERAGE: _coverage, ...env } = process.env;
const started = Date.now();
const result = spawnSync(process.execPath, [tsc, '-b', 'tsconfig.test-build.json'], { cwd: root, env, stdio: 'inherit' });
// tsc -b exits with 1 for any error, yet emits despite type (even syntax) errors, and then
// writes its build info too: a fresh build info after a failure means the outputs were written.
const buildInfo = path.join(root, 'dist/.tsbuildinfo-tests');
const emitted = () => fs.existsSync(buildInfo) && fs.statSync(buildInfo).mtimeMs >= started - 1000;
if (result.status === 1 && emitted()) {
  console.error('build-for-tests: type errors above; the tests run on the emitted JavaScript (npm run typecheck fails)');
} else if (result.status !== 0) {
  console.error(`build-for-tests: tsc -b tsconfig.test-build.json failed (${result.error?.message ?? `exit ${result.status ?? result.signal}`})`);
  process.exit(1);
}

// The loader's cache (test/helpers/typescript-loader.mjs) keeps every version of every module it
// saw: entries older than a week go (those still in use are compiled again once).
const cache = path.join(root, 'node_modules/.cache/tap-transpile');
const weekAgo = Date.now() - 7 * 24 * 60 * 60 * 1000;
for (const entry of fs.existsSync(cache) ? fs.readdirSync(cache, { recursive: true }) : []) {
  const file = path.join(cache, entry);
  try {
    const stat = fs.statSync(file);
    if (stat.isFile() && stat.mtimeMs < weekAgo) fs.rmSync(file, { force: true });
  } catch {
    // Removed meanwhile.
  }
}
/* c8 ignore stop */
