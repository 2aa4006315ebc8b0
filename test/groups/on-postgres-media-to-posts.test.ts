// On PostgreSQL: 8 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/on-postgres/media/api.test.ts',
  'test/on-postgres/media/generated.test.ts',
  'test/on-postgres/media/pages.test.ts',
  'test/on-postgres/newsletters/claims.test.ts',
  'test/on-postgres/newsletters/readers.test.ts',
  'test/on-postgres/newsletters/sending.test.ts',
  'test/on-postgres/newsletters/staff.test.ts',
  'test/on-postgres/posts/api.test.ts',
]);
