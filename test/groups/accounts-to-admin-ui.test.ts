// 7 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/accounts/invitations.test.ts',
  'test/accounts/roles.test.ts',
  'test/accounts/sessions.test.ts',
  'test/accounts/setup-links.test.ts',
  'test/accounts/sign-in-throttle.test.ts',
  'test/admin-ui/own-host.test.ts',
  'test/admin-ui/plugin.test.ts',
]);
