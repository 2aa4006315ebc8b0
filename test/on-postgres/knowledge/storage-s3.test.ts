// test/knowledge/storage-s3.test.ts again, on PostgreSQL (see run-on-postgres.ts): one S3 store and PostgreSQL, as several instances use them.
import { runOnPostgres } from '../run-on-postgres.js';

await runOnPostgres(() => import('../../knowledge/storage-s3.test.js'));
