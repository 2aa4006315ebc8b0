import { execFile } from 'node:child_process';
import { Readable } from 'node:stream';
import t from 'tap';
import { isUsageMistake, runAdmin } from '../../src/admin/cli.js';
import { loadConfig } from '../../src/config.js';
import { nodeArgs, onPostgres, startApp, startService, tempDataDir, testConfig, waitFor } from '../helpers/app.js';
import { startPostgres } from '../helpers/postgres.js';

type Outcome = { code: number; stdout: string; stderr: string };

/** The built `blog-admin`, as a process of its own; resolves with its exit code and output. */
function adminProcess(env: Record<string, string>, args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [...nodeArgs('src/admin/cli.ts'), ...args], { env: { ...process.env, ...env } }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end();
  });
}

/**
 * A `blog-admin` command run in this process (the command line's own runAdmin, its mistakes
 * told as the program tells them: one line, code 2): the same outcome as adminProcess, without
 * starting node and loading the service for each command.
 */
async function admin(env: Record<string, string>, args: string[], stdin?: string): Promise<Outcome> {
  let stdout = '';
  try {
    await runAdmin(args, loadConfig(env), (line) => (stdout += `${line}\n`), { stdin: Readable.from(stdin === undefined ? [] : [stdin]), env });
    return { code: 0, stdout, stderr: '' };
  } catch (error) {
    if (!isUsageMistake(error)) throw error;
    return { code: 2, stdout, stderr: `${error.message}\n` };
  }
}

t.test('blog-admin user commands, as a real process', async (t) => {
  const dataDir = tempDataDir(t);
  const database = onPostgres ? { DATABASE_URL: await startPostgres(t) } : { DATABASE_URL: '' };
  const env = { DATA_DIR: dataDir, PUBLIC_BASE_URL: 'https://blog.example.com', ...database };
  // The program itself once each way: its output, and a refusal in one line with exit code 2.
  const site = JSON.parse((await adminProcess(env, ['site', 'create', '--name', 'CLI Blog', '--json'])).stdout).site;
  const refused = await adminProcess(env, ['user', 'create', '--site', site.id, '--email', 'x@example.com', '--role', 'admin']);
  t.equal(refused.code, 2);
  t.match(refused.stderr, /--role owner\|editor\|author\|contributor/);
  t.notMatch(refused.stderr, /\n\s+at /, 'no stack trace');

  const created = await admin(env, ['user', 'create', '--site', site.id, '--email', 'Writer@Example.com']);
  t.equal(created.code, 0, created.stderr);
  t.match(created.stdout, /writer@example\.com {2}editor/, 'editor by default, the email folded');
  t.match(created.stdout, /setup link \(once, 24 hours\): https:\/\/blog\.example\.com\/admin\/setup#token=[A-Za-z0-9_-]{43}/);

  const withPassword = await admin(env, ['user', 'create', '--site', site.id, '--email', 'boss@example.com', '--role', 'owner', '--password-stdin'], 'a password from stdin\n');
  t.equal(withPassword.code, 0, withPassword.stderr);
  t.notMatch(withPassword.stdout, /setup link/, 'no link when the password is given');

  const bad = await admin(env, ['user', 'create', '--site', site.id, '--email', 'x@example.com', '--role', 'admin']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /--role owner\|editor\|author\|contributor/);
  const short = await admin(env, ['user', 'create', '--site', site.id, '--email', 'y@example.com', '--password-stdin'], 'short\n');
  t.equal(short.code, 2);
  t.match(short.stderr, /password must be 10-1024 characters/);

  const list = await admin(env, ['user', 'list', '--site', site.id, '--json']);
  t.same(
    JSON.parse(list.stdout).map((u: { email: string; active: boolean; sites: { role: string }[] }) => [u.email, u.active, u.sites[0]!.role]),
    [
      ['writer@example.com', false, 'editor'],
      ['boss@example.com', true, 'owner'],
    ],
  );
  t.match((await admin(env, ['user', 'list'])).stdout, /boss@example\.com\s+active\s+cli-blog:owner/);

  // The last owner stays one.
  const demote = await admin(env, ['user', 'set-role', '--site', site.id, '--email', 'boss@example.com', '--role', 'editor']);
  t.equal(demote.code, 2);
  t.match(demote.stderr, /at least one owner/);
  t.equal((await admin(env, ['user', 'set-role', '--site', site.id, '--email', 'writer@example.com', '--role', 'owner'])).code, 0);

  const reset = await admin(env, ['user', 'reset-password', '--email', 'boss@example.com']);
  t.equal(reset.code, 0, reset.stderr);
  const token = /#token=([A-Za-z0-9_-]{43})/.exec(reset.stdout)![1]!;

  // What the CLI made works in the service: the password, and the link.
  const config = testConfig(dataDir, env);
  const app = await startApp(t, config);
  const signIn = (password: string) => app.inject({ method: 'POST', url: '/api/v1/auth/sign-in', payload: { email: 'boss@example.com', password } });
  t.equal((await signIn('a password from stdin')).statusCode, 200);
  const used = await app.inject({ method: 'POST', url: '/api/v1/auth/setup', payload: { token, password: 'a reset password' } });
  t.equal(used.statusCode, 200, used.body);
  t.equal((await signIn('a reset password')).statusCode, 200);
  await app.close();

  const removed = await admin(env, ['user', 'remove', '--email', 'writer@example.com', '--site', site.id]);
  t.equal(removed.code, 0, removed.stderr);
  const deleted = await admin(env, ['user', 'remove', '--email', 'boss@example.com']);
  t.equal(deleted.code, 2, 'deleting the last owner of a site is refused');
  t.match(deleted.stderr, /at least one owner/);
  const none = await admin(env, ['user', 'reset-password', '--email', 'nobody@example.com']);
  t.equal(none.code, 2);
  t.match(none.stderr, /user not found/);
});

t.test('the first start prints the owner setup link beside the key', { skip: onPostgres && 'the SQLite first start is the one shown' }, async (t) => {
  const dataDir = tempDataDir(t);
  const service = await startService({ DATA_DIR: dataDir, BOOTSTRAP_API_KEY: '', ADMIN_EMAIL: 'Me@Example.com', GENERATOR: 'builtin', PUBLIC_BASE_URL: 'https://blog.example.com' });
  t.teardown(() => service.child.kill('SIGKILL'));
  const link = await waitFor(() => /https:\/\/blog\.example\.com\/admin\/setup#token=([A-Za-z0-9_-]{43})/.exec(service.output()), 'the setup link printed');
  t.match(service.output(), /Owner account me@example\.com/);
  t.match(service.output(), /blog_[A-Za-z0-9_-]{43}/, 'beside the key');
  const setup = (password: string) =>
    fetch(`${service.url}/api/v1/auth/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: link[1], password }) });
  const first = await setup('the owner password');
  t.equal(first.status, 200);
  t.match(first.headers.get('set-cookie'), /blog_session=.*HttpOnly/);
  t.equal((await setup('a second try at it')).status, 400, 'once only');
});
