// 3 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/admin-ui/hostile.test.ts',
  'test/admin-ui/media.test.ts',
  'test/admin-ui/newsletters.test.ts',
]);
