// test/admin-ui/preview.test.ts again, on PostgreSQL (see run-on-postgres.ts).
import { runOnPostgres } from '../run-on-postgres.js';

await runOnPostgres(() => import('../../admin-ui/preview.test.js'));
