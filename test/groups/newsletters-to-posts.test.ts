// 8 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/newsletters/sending.test.ts',
  'test/newsletters/smtp-session.test.ts',
  'test/newsletters/staff.test.ts',
  'test/posts/api.test.ts',
  'test/posts/list.test.ts',
  'test/posts/postgres-write-plans.test.ts',
  'test/posts/postgres.test.ts',
  'test/posts/scale.test.ts',
]);
