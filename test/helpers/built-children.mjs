// The child processes the service starts run compiled under test (.taprc's node-arg): the tests
// build dist/ before they run (.taprc's `before`), and plain node starts a knowledge extractor
// in a sixth of the time the TypeScript loader takes (see EXTRACTOR_SCRIPT in
// src/knowledge/extract-runner.ts). The test files themselves still run from source.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const extractor = fileURLToPath(new URL('../../dist/src/knowledge/extract-worker.js', import.meta.url));
if (!process.env.EXTRACTOR_SCRIPT && fs.existsSync(extractor)) process.env.EXTRACTOR_SCRIPT = extractor;
