// 3 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/generation/grounding.test.ts',
  'test/public-site/browser.test.ts',
  'test/public-site/headers.test.ts',
]);
