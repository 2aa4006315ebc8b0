// 10 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/app/log-redact.test.ts',
  'test/app/rate-limit.test.ts',
  'test/app/ready.test.ts',
  'test/app/server-options.test.ts',
  'test/app/storage-faults.test.ts',
  'test/app/test-groups.test.ts',
  'test/client/client.test.ts',
  'test/comments/comments.test.ts',
  'test/comments/mail.test.ts',
  'test/comments/spam-guard.test.ts',
]);
