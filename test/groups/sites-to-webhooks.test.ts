// 9 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/sites/postgres.test.ts',
  'test/spam-guard/guard.test.ts',
  'test/spam-guard/postgres-guard.test.ts',
  'test/spam-guard/routes.test.ts',
  'test/tasks/batch.test.ts',
  'test/text/hardening.test.ts',
  'test/webhooks/address.test.ts',
  'test/webhooks/api.test.ts',
  'test/webhooks/postgres.test.ts',
]);
