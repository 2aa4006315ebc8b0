// On PostgreSQL: 7 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/on-postgres/public-site/api.test.ts',
  'test/on-postgres/public-site/cache.test.ts',
  'test/on-postgres/public-site/redirect.test.ts',
  'test/on-postgres/publishing/scheduled.test.ts',
  'test/on-postgres/sites/auth-failures.test.ts',
  'test/on-postgres/sites/domains.test.ts',
  'test/on-postgres/tasks/batch.test.ts',
]);
