import tap from 'tap';
import { postgresUnavailable } from '../helpers/postgres.js';

/**
 * Runs an API test file against PostgreSQL: the same tests, each app on a fresh database of the
 * throwaway cluster (TEST_DATABASE=postgres, read by the app helper when the file loads), so
 * `npm test` checks both databases. Skipped, saying why, where PostgreSQL cannot run.
 */
export async function runOnPostgres(load: () => Promise<unknown>): Promise<void> {
  const unavailable = postgresUnavailable();
  if (unavailable) {
    tap.comment(unavailable);
    tap.plan(0, unavailable);
    return;
  }
  // The same tests plus a database per app: allow them more than the default file timeout.
  tap.setTimeout(600_000);
  process.env.TEST_DATABASE = 'postgres';
  await load();
}
