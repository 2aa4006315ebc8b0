// test/edge-cache.test.ts again, on PostgreSQL (see run-on-postgres.ts).
import { runOnPostgres } from './run-on-postgres.js';

await runOnPostgres(() => import('../edge-cache.test.js'));
