// On PostgreSQL: 7 test files in one test process (see test/helpers/test-group.ts).
import { runGroup } from '../helpers/test-group.js';

await runGroup([
  'test/on-postgres/accounts/invitations.test.ts',
  'test/on-postgres/accounts/roles.test.ts',
  'test/on-postgres/accounts/sessions.test.ts',
  'test/on-postgres/accounts/setup-links.test.ts',
  'test/on-postgres/accounts/sign-in-throttle.test.ts',
  'test/on-postgres/admin-ui/preview.test.ts',
  'test/on-postgres/analytics/counting.test.ts',
]);
