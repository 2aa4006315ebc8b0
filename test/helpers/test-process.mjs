// Loaded first in every test process and in every process a test starts (.taprc's test-env puts
// it in NODE_OPTIONS, which children inherit), before tap's own imports.
//
// 1. tap's process tracker (@tapjs/processinfo) records every module a process loads: it reads
//    each file a second time, splits it into lines and looks up its source map (about half a
//    second of CPU in a test process, the same again in each server or extractor a test starts).
//    It reads which files to leave out from an environment variable when it is imported, and
//    tap sets that variable to leave out nothing but its own folders. Coverage (`npm run
//    coverage`) needs the project's own files recorded, never node_modules; without coverage
//    (`npm test`) nothing needs recording. tap also puts the tracker in the NODE_OPTIONS of every
//    process a test starts, so taking it out of NODE_OPTIONS does not last: the variable,
//    inherited, does.
// 2. Node's compile cache: each process compiles the same modules (V8's code cache, kept on disk
//    and shared by all of them).
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const coverage = process.env._TAPJS_PROCESSINFO_COVERAGE_ !== '0';
process.env._TAPJS_PROCESSINFO_EXCLUDE_ = String(coverage ? /(^(node|tapmock):|[\\/](\.tap|tap-snapshots|node_modules)[\\/])/ : /^/);

const self = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(self), '../..');
// The tests start children in other folders too: they find this file by its absolute address.
if (process.env.NODE_OPTIONS?.includes('test/helpers/test-process.mjs')) {
  process.env.NODE_OPTIONS = process.env.NODE_OPTIONS.replace(/--import=\S*test\/helpers\/test-process\.mjs/, `--import=${pathToFileURL(self)}`);
}

if (process.env.TAP_COMPILE_CACHE !== '0') {
  module.enableCompileCache?.(path.join(root, 'node_modules/.cache/node-compile-cache'));
}
