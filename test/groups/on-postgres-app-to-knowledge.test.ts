// On PostgreSQL: 7 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/on-postgres/app/input.test.ts',
  'test/on-postgres/comments/comments.test.ts',
  'test/on-postgres/comments/mail.test.ts',
  'test/on-postgres/comments/spam-guard.test.ts',
  'test/on-postgres/generation/generate.test.ts',
  'test/on-postgres/idempotency/api.test.ts',
  'test/on-postgres/knowledge/hybrid.test.ts',
]);
