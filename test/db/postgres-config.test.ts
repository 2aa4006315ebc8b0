import path from 'node:path';
import t from 'tap';
import { ConfigError, databaseTarget, loadConfig } from '../../src/config.js';
import { maskDatabaseUrl } from '../../src/db/url.js';
import { failedStart, spawnServer, tempDataDir } from '../helpers/app.js';
import { closedPortUrl } from '../helpers/fake-ollama.js';

// DATABASE_URL and DATABASE_POOL_MAX: no PostgreSQL needed.

t.test('DATABASE_URL unset or blank is SQLite in DATA_DIR, as ever', async (t) => {
  t.same(databaseTarget({}), { kind: 'sqlite', path: null });
  t.same(databaseTarget({ DATABASE_URL: '  ' }), { kind: 'sqlite', path: null });
});

t.test('file: URLs and paths name a SQLite file', async (t) => {
  t.same(databaseTarget({ DATABASE_URL: 'file:///var/lib/blog/blog.db' }), { kind: 'sqlite', path: '/var/lib/blog/blog.db' });
  t.same(databaseTarget({ DATABASE_URL: 'file://localhost/var/lib/blog%20data/blog.db' }), { kind: 'sqlite', path: '/var/lib/blog data/blog.db' });
  t.same(databaseTarget({ DATABASE_URL: 'file:data/blog.db' }), { kind: 'sqlite', path: path.resolve('data/blog.db') });
  t.same(databaseTarget({ DATABASE_URL: '/srv/blog.db' }), { kind: 'sqlite', path: '/srv/blog.db' });
  t.same(databaseTarget({ DATABASE_URL: './blog.db' }), { kind: 'sqlite', path: path.resolve('blog.db') });
  for (const bad of ['file:', 'file:///srv/', 'file://elsewhere/srv/blog.db', 'file:100%.db']) {
    t.throws(() => databaseTarget({ DATABASE_URL: bad }), { name: 'ConfigError', variable: 'DATABASE_URL' }, bad);
  }
});

t.test('postgres:// and postgresql:// URLs name a PostgreSQL database, with a pool of DATABASE_POOL_MAX', async (t) => {
  t.same(databaseTarget({ DATABASE_URL: 'postgres://blog:pw@db:5432/blog' }), { kind: 'postgres', url: 'postgres://blog:pw@db:5432/blog', poolMax: 10 });
  t.same(databaseTarget({ DATABASE_URL: ' postgresql://db/blog?sslmode=require ', DATABASE_POOL_MAX: '25' }), {
    kind: 'postgres',
    url: 'postgresql://db/blog?sslmode=require',
    poolMax: 25,
  });
  t.same(databaseTarget({ DATABASE_URL: 'postgres:///blog?host=/var/run/postgresql' }), { kind: 'postgres', url: 'postgres:///blog?host=/var/run/postgresql', poolMax: 10 }, 'a unix socket');
  t.throws(() => databaseTarget({ DATABASE_URL: 'postgres://db/blog', DATABASE_POOL_MAX: '0' }), { name: 'ConfigError', variable: 'DATABASE_POOL_MAX' });
  t.throws(() => databaseTarget({ DATABASE_URL: 'postgres://db/blog', DATABASE_POOL_MAX: 'ten' }), { name: 'ConfigError', variable: 'DATABASE_POOL_MAX' });
});

t.test('any other DATABASE_URL is a configuration error naming it, never showing its password', async (t) => {
  const cases = ['mysql://root:hunter2@db/blog', 'postgres:db/blog', 'postgres://blog:hunter2@db:port/blog', 'redis://:hunter2@cache'];
  for (const value of cases) {
    let error: unknown;
    try {
      databaseTarget({ DATABASE_URL: value });
    } catch (caught) {
      error = caught;
    }
    t.ok(error instanceof ConfigError, value);
    t.match((error as Error).message, /^Invalid environment variable DATABASE_URL: expected /, value);
    t.notMatch((error as Error).message, /hunter2/, value);
  }
});

t.test('the configuration carries the database DATABASE_URL names; an unknown kind stops the start naming it', async (t) => {
  t.same(loadConfig({}).database, { kind: 'sqlite', path: null });
  t.same(loadConfig({ DATABASE_URL: 'postgres://blog:s3cret@db/blog', DATABASE_POOL_MAX: '4' }).database, { kind: 'postgres', url: 'postgres://blog:s3cret@db/blog', poolMax: 4 });
  t.throws(() => loadConfig({ DATABASE_URL: 'mysql://blog:s3cret@db/blog' }), /DATABASE_URL.*mysql:\/\/blog:\*\*\*@db\/blog/);
});

t.test('database URLs are shown with their password hidden', async (t) => {
  const cases: [string, string][] = [
    ['postgres://blog:s3cret@db:5432/blog', 'postgres://blog:***@db:5432/blog'],
    ['postgresql://blog:p%40ss%2Fword@db/blog?sslmode=require', 'postgresql://blog:***@db/blog?sslmode=require'],
    ['postgres://blog@db/blog', 'postgres://blog@db/blog'],
    ['postgres://db/blog?user=blog&password=s3cret', 'postgres://db/blog?user=blog&password=***'],
    // Not valid URLs (an unencoded `/` or `#` in the password): still nothing of it shown.
    ['postgres://blog:s3c/ret@db/blog', 'postgres://***@db/blog'],
    ['postgres://blog:12#s3cret@db/blog', 'postgres://blog:12#***'],
    ['not a url, password=s3cret', 'not a url, password=***'],
  ];
  for (const [url, masked] of cases) t.equal(maskDatabaseUrl(url), masked, url);
});

t.test('a PostgreSQL that cannot be reached at start-up (no wait asked) stops the server with one line naming DATABASE_URL, password hidden', async (t) => {
  const port = new URL(await closedPortUrl()).port;
  const env = { DATA_DIR: tempDataDir(t), PORT: '0', DATABASE_URL: `postgres://blog:s3cret@127.0.0.1:${port}/blog`, STARTUP_WAIT_SECONDS: '0' };
  const { code, stderr } = await failedStart(spawnServer(env));
  t.equal(code, 1);
  t.match(stderr.trim(), new RegExp(`^Cannot use the PostgreSQL database at postgres://blog:\\*\\*\\*@127\\.0\\.0\\.1:${port}/blog \\(DATABASE_URL\\): .*ECONNREFUSED`));
  t.notMatch(stderr, 's3cret');
  t.equal(stderr.trim().split('\n').length, 1, 'one line');
});
