import { runOnPostgres } from '../run-on-postgres.js';

await runOnPostgres(() => import('../../media/generated.test.js'));
