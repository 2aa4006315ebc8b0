// 8 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/generation/pool.test.ts',
  'test/generation/prose.test.ts',
  'test/generation/relevance-rules.test.ts',
  'test/generation/writer.test.ts',
  'test/idempotency/api.test.ts',
  'test/idempotency/postgres-idempotency-knowledge.test.ts',
  'test/jobs/loop.test.ts',
  'test/jobs/postgres-app.test.ts',
]);
