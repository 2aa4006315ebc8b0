// 2 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/admin-ui/comments.test.ts',
  'test/admin-ui/editor.test.ts',
]);
