import { Readable } from 'node:stream';
import t from 'tap';
import { runAdmin } from '../../src/admin/cli.js';
import { openDatabase } from '../../src/db/sqlite.js';
import { postgresSkip, startPostgres } from '../helpers/postgres.js';
import { tempDataDir, testConfig } from '../helpers/app.js';

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: Error) => error,
  );

t.test('migrate-to-postgres takes its target from MIGRATE_TO_URL or standard input, off the command line', async (t) => {
  const dataDir = tempDataDir(t);
  openDatabase(dataDir).close();
  const config = testConfig(dataDir);
  const closed = 'postgres://blog:hunter2@127.0.0.1:1/blog';

  const fromEnv = await refusal(runAdmin(['migrate-to-postgres'], config, () => {}, { env: { MIGRATE_TO_URL: closed } }));
  t.match(fromEnv, { name: 'MigrationError', message: /^Cannot use the PostgreSQL database at postgres:\/\/blog:\*\*\*@127\.0\.0\.1:1\/blog: .*ECONNREFUSED/ }, 'the URL of MIGRATE_TO_URL is used');
  const fromStdin = await refusal(runAdmin(['migrate-to-postgres', '--to', '-'], config, () => {}, { stdin: Readable.from([`${closed}\n`]) }));
  t.match(fromStdin, { name: 'MigrationError', message: /^Cannot use the PostgreSQL database at postgres:\/\/blog:\*\*\*@127\.0\.0\.1:1\/blog/ }, 'the URL on standard input is used');
  for (const error of [fromEnv, fromStdin]) t.notMatch(error?.message, /hunter2/, 'the password is never shown');

  const badEnv = await refusal(runAdmin(['migrate-to-postgres'], config, () => {}, { env: { MIGRATE_TO_URL: 'mysql://root:hunter2@db/blog' } }));
  t.match(badEnv, { message: /^MIGRATE_TO_URL must be a postgres:\/\/ or postgresql:\/\/ URL, got "mysql:\/\/root:\*\*\*@db\/blog"/ });
  const emptyStdin = await refusal(runAdmin(['migrate-to-postgres', '--to', '-'], config, () => {}, { stdin: Readable.from(['\n']) }));
  t.match(emptyStdin, { message: /needs --to postgres:\/\/.*MIGRATE_TO_URL.*standard input/ });
  const none = await refusal(runAdmin(['migrate-to-postgres'], config, () => {}, { env: {} }));
  t.match(none, { message: /needs --to postgres:\/\// });
  // --to wins over the variable.
  const both = await refusal(runAdmin(['migrate-to-postgres', '--to', 'mysql://x@y/z'], config, () => {}, { env: { MIGRATE_TO_URL: closed } }));
  t.match(both, { message: /^--to must be/ });
});

t.test('a whole migration with the URL on standard input', { skip: postgresSkip() }, async (t) => {
  const dataDir = tempDataDir(t);
  openDatabase(dataDir).close();
  const url = await startPostgres(t);
  const lines: string[] = [];
  await runAdmin(['migrate-to-postgres', '--to', '-', '--json'], testConfig(dataDir), (line) => lines.push(line), { stdin: Readable.from([`${url}\n`]) });
  const report = JSON.parse(lines.join('\n'));
  t.match(report, { tables: [{ table: 'sites', sqlite: 0, postgres: 0 }] });
});
