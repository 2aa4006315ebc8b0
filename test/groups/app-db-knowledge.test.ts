// 4 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/app/foundation.test.ts',
  'test/db/postgres-config.test.ts',
  'test/knowledge/api.test.ts',
  'test/knowledge/extract-hardening.test.ts',
]);
