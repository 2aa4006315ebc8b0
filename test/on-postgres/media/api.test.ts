import { runOnPostgres } from '../run-on-postgres.js';

await runOnPostgres(() => import('../../media/api.test.js'));
