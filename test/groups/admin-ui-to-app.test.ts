// 8 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/admin-ui/preview.test.ts',
  'test/admin/migrate-target.test.ts',
  'test/analytics/counting.test.ts',
  'test/analytics/rules.test.ts',
  'test/app/bad-input.test.ts',
  'test/app/fuzz.test.ts',
  'test/app/http-hardening.test.ts',
  'test/app/input.test.ts',
]);
