// A child process of test/db/postgres-foundation.test.ts: an instance of the service starting on
// DATABASE_URL. It says `loaded` once its modules are, opens the database (migrating it) when
// told `go` on stdin, so that several open at the same moment, and says `up` once it answers.
import { once } from 'node:events';
import { openPostgres } from '../../src/db/postgres.js';

process.stdout.write('loaded\n');
await once(process.stdin, 'data');
const handle = await openPostgres(process.env.DATABASE_URL!, { poolMax: 2 });
await handle.ping();
await handle.close();
process.stdout.write('up\n');
process.stdin.destroy();
