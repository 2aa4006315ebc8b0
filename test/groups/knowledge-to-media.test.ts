// 10 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/knowledge/chunk.test.ts',
  'test/knowledge/detect.test.ts',
  'test/knowledge/fairness.test.ts',
  'test/knowledge/indexer.test.ts',
  'test/knowledge/postgres-search.test.ts',
  'test/knowledge/retrieval.test.ts',
  'test/knowledge/temporary-files.test.ts',
  'test/mail/mail.test.ts',
  'test/mail/postgres-mail.test.ts',
  'test/media/api.test.ts',
]);
