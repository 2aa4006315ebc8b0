// The test processes' TypeScript loader (.taprc's node-arg; tap's own, ts-node, is off there:
// `type-strip-only`).
//
// Each test process imports over a hundred of the project's TypeScript modules. ts-node loaded
// the TypeScript compiler in every process (about a second of CPU, on a thread of its own)
// even when nothing needed compiling. Here a module is compiled the way ts-node's transpile-only
// mode did it (TypeScript's transpileModule with the project's compiler options: types
// removed, no type check), and the output is kept on disk, keyed by the module's text, the
// options and the versions of Node and TypeScript: a later process loading the same text reads
// it back, and loads the compiler only on a miss. A module whose text changed has a new key:
// there is nothing to invalidate. TAP_TRANSPILE_CACHE=0 compiles every module again.
//
// The hooks run in the process's own thread (module.registerHooks). Imports name a module as
// it is compiled (`./store.js`): one that does not exist is looked for as `.ts` beside it.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire, registerHooks } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cacheDir = path.join(root, 'node_modules/.cache/tap-transpile');
const useCache = process.env.TAP_TRANSPILE_CACHE !== '0';
const require = createRequire(import.meta.url);
const typescriptVersion = require('typescript/package.json').version;
const tsconfigText = fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8');

// Changed whenever this loader's own compiler options change: the cache keys include it.
const OUTPUT_FORM = 3;

let compilerOptions = null;
/** The project's options, as the compiler reads tsconfig.json, made fit for one module at a time. */
function options(ts) {
  if (compilerOptions) return compilerOptions;
  const { config, error } = ts.parseConfigFileTextToJson('tsconfig.json', tsconfigText);
  if (error) throw new Error(`tsconfig.json: ${ts.flattenDiagnosticMessageText(error.messageText, '\n')}`);
  const parsed = ts.convertCompilerOptionsFromJson(config.compilerOptions ?? {}, root, 'tsconfig.json');
  compilerOptions = {
    ...parsed.options,
    // The package is ESM ("type": "module"): each .ts module is emitted as one.
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    // Stack traces name the TypeScript lines (the tests run with --enable-source-maps). The
    // output sits where its source is (no outDir): the map names the source beside it.
    outDir: undefined,
    rootDir: undefined,
    sourceMap: false,
    inlineSourceMap: true,
    // Without the source's text: the map points at the .ts file itself, where stack traces and
    // coverage read it (the text made every module's map, decoded at each load, twice as big).
    inlineSources: false,
    declaration: false,
    noEmit: false,
  };
  return compilerOptions;
}

function compile(file, text) {
  const ts = require('typescript');
  const { outputText } = ts.transpileModule(text, { fileName: file, compilerOptions: options(ts) });
  return outputText;
}

const isProjectTypeScript = (url) => url.startsWith('file:') && /\.m?ts$/.test(url.split('?')[0]) && !url.includes('/node_modules/');

registerHooks({
  resolve(specifier, context, nextResolve) {
    // `./store.js` from a TypeScript module: the source beside it is `./store.ts`. Looked for
    // first (one stat), not after Node failed to find the `.js` (an error built for each of the
    // few hundred project modules a process loads).
    const parent = context.parentURL ?? '';
    if (/^\.{1,2}\/.*\.m?js$/.test(specifier) && isProjectTypeScript(parent)) {
      const source = specifier.replace(/js$/, 'ts');
      if (fs.existsSync(fileURLToPath(new URL(source, parent)))) return nextResolve(source, context);
    }
    return nextResolve(specifier, context);
  },
  load(url, context, nextLoad) {
    if (!isProjectTypeScript(url)) return nextLoad(url, context);
    const file = fileURLToPath(url.split('?')[0]);
    const text = fs.readFileSync(file, 'utf8');
    const key = createHash('sha256').update(JSON.stringify([process.versions.node, typescriptVersion, tsconfigText, OUTPUT_FORM, file, text])).digest('hex');
    const entry = path.join(cacheDir, key.slice(0, 2), `${key.slice(2)}.js`);
    if (useCache) {
      try {
        return { format: 'module', source: fs.readFileSync(entry, 'utf8'), shortCircuit: true };
      } catch {
        // Not there yet (or unreadable): compile it.
      }
    }
    const source = compile(file, text);
    if (useCache) {
      try {
        // Written aside and renamed into place: a process reading the entry sees all of it or nothing.
        fs.mkdirSync(path.dirname(entry), { recursive: true });
        const aside = `${entry}.${process.pid}-${Math.random().toString(36).slice(2)}`;
        fs.writeFileSync(aside, source);
        fs.renameSync(aside, entry);
      } catch {
        // A cache that cannot be written only costs time.
      }
    }
    return { format: 'module', source, shortCircuit: true };
  },
});
