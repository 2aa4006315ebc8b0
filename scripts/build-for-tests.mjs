// Run by tap before any test file (.taprc's `before`): compiles the service into dist/ exactly
// as `npm run build` does (`tsc -b tsconfig.build.json`, incrementally, sharing its build info:
// nothing to do after `npm install` built it, or when no source changed since), then the few test
// helpers that run as child processes (the PostgreSQL workers, and the helpers they import) into
// dist/test/helpers/. Real-process tests start these compiled files with plain node
// (test/helpers/built.ts), not through the TypeScript loader the test files themselves run under:
// that loader compiles every module again in every process.
//
// Type errors are reported and the tests still run (the emitted JavaScript is complete, as
// under the loader, which only strips types); `npm run typecheck` is the check for types. A
// build that emits nothing (a broken configuration) stops the run.
/* c8 ignore start */
// (tap's coverage records this script too, as the first process it starts: it is no code under test.)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
// tap's process tracking and coverage have nothing to learn from the compiler.
const { NODE_OPTIONS: _options, NODE_V8_COVERAGE: _coverage, ...env } = process.env;
const started = Date.now();
const result = spawnSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], { cwd: root, env, stdio: 'inherit' });
// tsc -b exits with 1 for any error, yet emits despite type (even syntax) errors, and then
// writes its build info too: a fresh build info after a failure means the outputs were written.
const buildInfo = path.join(root, 'dist/.tsbuildinfo');
const emitted = () => fs.existsSync(buildInfo) && fs.statSync(buildInfo).mtimeMs >= started - 1000;
if (result.status === 1 && emitted()) {
  console.error('build-for-tests: type errors above; the tests run on the emitted JavaScript (npm run typecheck fails)');
} else if (result.status !== 0) {
  console.error(`build-for-tests: tsc -b tsconfig.build.json failed (${result.error?.message ?? `exit ${result.status ?? result.signal}`})`);
  process.exit(1);
}

// The test helpers started as processes, and the test helpers they import, one module at a time
// (types removed, as the tests' loader does: they import the service from dist/src/ by the same
// relative paths). A handful of files: compiled again at every run.
const ts = createRequire(import.meta.url)('typescript');
const helperEntries = ['test/helpers/postgres-open.ts', 'test/helpers/pg-queue-worker.ts'];
const compilerOptions = { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, esModuleInterop: true, sourceMap: true };
const done = new Set();
const compileHelper = (file) => {
  if (done.has(file)) return;
  done.add(file);
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  const out = path.join(root, 'dist', file.replace(/\.ts$/, '.js'));
  const { outputText, sourceMapText } = ts.transpileModule(text, { fileName: path.join(root, file), compilerOptions });
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, outputText.replace(/\/\/# sourceMappingURL=.*$/m, `//# sourceMappingURL=${path.basename(out)}.map`));
  fs.writeFileSync(`${out}.map`, sourceMapText.replace(/"sources":\["[^"]*"\]/, `"sources":["${path.relative(path.dirname(out), path.join(root, file))}"]`));
  // The helpers it imports (relative imports that stay inside test/).
  for (const [, specifier] of text.matchAll(/^import (?!type )[^;]*? from '(\.{1,2}\/[^']+)\.js';/gms)) {
    const imported = path.relative(root, path.resolve(path.dirname(path.join(root, file)), `${specifier}.ts`));
    if (imported.startsWith(`test${path.sep}`)) compileHelper(imported);
  }
};
helperEntries.forEach(compileHelper);

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
