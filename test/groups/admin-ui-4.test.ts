// 3 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/admin-ui/owner-screens.test.ts',
  'test/admin-ui/schedule.test.ts',
  'test/analytics/stats-screen.test.ts',
]);
