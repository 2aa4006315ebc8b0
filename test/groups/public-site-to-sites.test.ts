// 9 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/public-site/api.test.ts',
  'test/public-site/cache.test.ts',
  'test/public-site/postgres-full-disk.test.ts',
  'test/public-site/redirect.test.ts',
  'test/public-site/render.test.ts',
  'test/revisions/api.test.ts',
  'test/schemas/openapi.test.ts',
  'test/sites/auth-failures.test.ts',
  'test/sites/domains.test.ts',
]);
