import tap from 'tap';
import { postgresTests } from '../helpers/postgres.js';

/**
 * Runs an API test file against PostgreSQL: the same tests, each app on a fresh database of the
 * throwaway cluster (TEST_DATABASE=postgres, read by the app helper when the file loads), so
 * `npm test` checks both databases. Skipped, saying why, where PostgreSQL cannot run (a failure
 * under CI: see postgresTests).
 */
export async function runOnPostgres(load: () => Promise<unknown>): Promise<void> {
  let loading: Promise<unknown> | undefined;
  postgresTests(() => {
    // The same tests plus a database per app: allow them more than the default file timeout.
    tap.setTimeout(600_000);
    process.env.TEST_DATABASE = 'postgres';
    loading = load();
  });
  await loading;
}
