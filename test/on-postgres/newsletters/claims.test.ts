// test/newsletters/claims.test.ts again, on PostgreSQL (see run-on-postgres.ts).
import { runOnPostgres } from '../run-on-postgres.js';

await runOnPostgres(() => import('../../newsletters/claims.test.js'));
