import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';

/*
 * Several test files in one test process. Every test process pays about 2 s of CPU before its
 * first test (tap itself, loading the service and its libraries, the first app's warm-up), the
 * same for a file of five tests as for one of five hundred: over the suite's many small files
 * that was a sixth of its time. Files whose service runs in the test process itself (app.inject,
 * or an app listening there for Chromium to drive; an SMTP server or a database in the process;
 * no real server started) are run a few at a time by the group files of test/groups/: each member runs as a subtest named by its path,
 * one member after the other, as it would alone.
 *
 * While a member's module loads, the root test's methods that a file uses at its top level
 * (defining tests, its timeout, plan and teardowns, a skip) act on the member's subtest instead:
 * its tests nest under its name, its teardowns run when its own tests end, and a member that
 * skips itself (no PostgreSQL here) skips only itself. tap's `exclude` in .taprc keeps the
 * members from also running one by one; test/app/test-groups.test.ts checks the two lists agree.
 * A member still runs alone when named: `npx tap test/sites/domains.test.ts`.
 */

/** The root's methods a member's top level may call, handed to its subtest while it loads. */
const HANDED_OVER = ['test', 'skip', 'todo', 'plan', 'end', 'comment', 'pass', 'fail', 'setTimeout', 'teardown'] as const;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Runs the member files (paths from the repository's root), each as a subtest of this process's root. */
export async function runGroup(members: readonly string[]): Promise<void> {
  const onPostgres = members.filter((file) => file.startsWith('test/on-postgres/'));
  // An on-postgres file sets TEST_DATABASE before the app helper loads: that happens once per process.
  if (onPostgres.length > 0 && onPostgres.length !== members.length) throw new Error('a group runs on-postgres files only, or none');
  const rootTest = t as unknown as Record<string, unknown>;
  for (const member of members) {
    const file = path.join(root, member);
    if (!fs.existsSync(file)) throw new Error(`${member}: no such test file`);
    await t.test(member, async (subtest) => {
      const own = subtest as unknown as Record<string, (...args: unknown[]) => unknown>;
      const saved = HANDED_OVER.map((name) => [name, rootTest[name]] as const);
      for (const name of HANDED_OVER) rootTest[name] = (...args: unknown[]) => own[name]!.apply(subtest, args);
      try {
        await import(pathToFileURL(file).href);
      } finally {
        for (const [name, method] of saved) rootTest[name] = method;
      }
    });
  }
}
