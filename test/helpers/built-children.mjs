// The child processes the service starts run compiled under test (.taprc's node-arg): the tests
// build dist/ before they run (.taprc's `before`), and plain node starts a knowledge extractor
// in a sixth of the time the TypeScript loader takes (see EXTRACTOR_SCRIPT in
// src/knowledge/extract-runner.ts). The test files themselves still run from source.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const extractor = fileURLToPath(new URL('../../dist/src/knowledge/extract-worker.js', import.meta.url));
if (!process.env.EXTRACTOR_SCRIPT && fs.existsSync(extractor)) process.env.EXTRACTOR_SCRIPT = extractor;

// tap's process tracker (@tapjs/processinfo, which tap puts in NODE_OPTIONS) follows every
// process a test starts and records each module it loads, for coverage. Without coverage
// (`npm test`), the servers, admin commands and extractors the tests start need none of it: it
// cost each of them about half a second of CPU at start (1.1 s to load the service, 1.65 s with
// it). `npm run coverage` keeps it.
if (process.env._TAPJS_PROCESSINFO_COVERAGE_ === '0' && process.env.NODE_OPTIONS?.includes('@tapjs/processinfo')) {
  process.env.NODE_OPTIONS = process.env.NODE_OPTIONS.replace(/"?--(?:import|loader|require)=[^\s"]*@tapjs\/processinfo[^\s"]*"?/g, '').trim();
}
