/**
 * The groups of test files that share a test process (test/groups/, test/helpers/test-group.ts)
 * and .taprc's `exclude` name the same files: a file left out of the exclude list would run
 * twice, a file excluded but in no group would never run. Members run in the test process
 * itself: none starts the service as a real process or stops a PostgreSQL of its own.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const groupsDir = path.join(root, 'test/groups');

const groups = fs
  .readdirSync(groupsDir)
  .filter((name) => name.endsWith('.test.ts'))
  .sort()
  .map((name) => {
    const text = fs.readFileSync(path.join(groupsDir, name), 'utf8');
    return { name, members: [...text.matchAll(/^ {2}'(test\/[^']+)',$/gm)].map((match) => match[1]!) };
  });

/** .taprc's `exclude` entries (a YAML list of quoted paths under `exclude:`). */
function excluded(): string[] {
  const lines = fs.readFileSync(path.join(root, '.taprc'), 'utf8').split('\n');
  const start = lines.indexOf('exclude:');
  if (start < 0) return [];
  const entries: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const entry = /^ {2}- "([^"]+)"$/.exec(line);
    if (!entry) break;
    entries.push(entry[1]!);
  }
  return entries;
}

t.test('each group names test files that exist, outside test/groups/', async (t) => {
  t.ok(groups.length > 0);
  for (const group of groups) {
    t.ok(group.members.length > 1, `${group.name}: more than one member`);
    for (const member of group.members) {
      t.ok(fs.existsSync(path.join(root, member)) && member.endsWith('.test.ts'), `${group.name}: ${member} is a test file`);
      t.notOk(member.startsWith('test/groups/'), `${group.name}: ${member} is not a group`);
    }
    const onPostgres = group.members.filter((member) => member.startsWith('test/on-postgres/')).length;
    t.ok(onPostgres === 0 || onPostgres === group.members.length, `${group.name}: on-postgres files only, or none`);
  }
});

t.test('a file is in one group at most, and .taprc excludes exactly the groups\' members', async (t) => {
  const members = groups.flatMap((group) => group.members);
  t.same(members.filter((member, i) => members.indexOf(member) !== i), [], 'no file in two groups');
  t.same(excluded().sort(), [...new Set(members)].sort());
});

t.test('members run in the test process: no real server, no PostgreSQL of their own', async (t) => {
  // (An on-postgres file runs an API test file whose real-process tests are skipped on PostgreSQL.)
  const members = groups.flatMap((group) => group.members).filter((member) => !member.startsWith('test/on-postgres/') && member !== 'test/app/test-groups.test.ts');
  for (const member of members) {
    t.notMatch(fs.readFileSync(path.join(root, member), 'utf8'), /\bstartService\(|node:child_process|\bownPostgres\(|compileEveryRouteSchema/, `${member} runs in process`);
  }
});

t.test('a group runs each member as its subtest: a member that skips itself skips only itself, its teardowns run when its tests end', async (t) => {
  const members = ['member-skips.ts', 'member-tests.ts', 'member-after.ts'].map((name) => `test/fixtures/test-group/${name}`);
  const code = `import { runGroup } from './test/helpers/test-group.ts'; await runGroup(${JSON.stringify(members)});`;
  // A process of its own, as tap starts a group, but outside this run: none of tap's variables.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^_?TAP/.test(name) && name !== 'NODE_OPTIONS'));
  const { stdout } = await promisify(execFile)(process.execPath, ['--import=./test/helpers/typescript-loader.mjs', '--input-type=module', '-e', code], { cwd: root, env });
  const lines = stdout.split('\n').map((line) => line.trim());
  t.ok(lines.includes('ok 1 - test/fixtures/test-group/member-skips.ts # SKIP skipped on purpose'), 'the first member skipped itself');
  const line = (start: string) => lines.findIndex((text) => text.startsWith(start));
  const test = line('ok 1 - a test of the second member');
  const teardown = line('# teardown of member-tests');
  const third = line('# Subtest: test/fixtures/test-group/member-after.ts');
  t.ok(test > 0 && teardown > test && third > teardown, 'the second member ran, then its teardown, then the third member');
  t.ok(line('ok 3 - test/fixtures/test-group/member-after.ts') > third, 'the third member ran');
  t.match(stdout, /^1\.\.3$/m, 'three members, nothing at the root besides them');
});
