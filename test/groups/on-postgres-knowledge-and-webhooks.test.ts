// On PostgreSQL: 2 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/on-postgres/knowledge/api.test.ts',
  'test/on-postgres/webhooks/api.test.ts',
]);
