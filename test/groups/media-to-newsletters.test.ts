// 9 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/media/generated.test.ts',
  'test/media/pages.test.ts',
  'test/media/public-serve.test.ts',
  'test/media/storage-s3.test.ts',
  'test/newsletters/claims.test.ts',
  'test/newsletters/mime.test.ts',
  'test/newsletters/ordering.test.ts',
  'test/newsletters/postgres-claims.test.ts',
  'test/newsletters/readers.test.ts',
]);
