// test/newsletters/readers.test.ts again, on PostgreSQL (see run-on-postgres.ts).
import { runOnPostgres } from '../run-on-postgres.js';

await runOnPostgres(() => import('../../newsletters/readers.test.js'));
