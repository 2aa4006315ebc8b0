import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import t from 'tap';
import { unsupportedNode } from '../../src/node-version.js';
import { built, nodeArgs } from '../helpers/built.js';
import { tempDataDir } from '../helpers/app.js';

t.test('the supported lines are 22 and later; older ones get a message saying what to do', async (t) => {
  for (const version of ['22.0.0', '22.12.1', '24.21.0', 'v24.1.0', '25.0.0']) t.equal(unsupportedNode(version), null, version);
  for (const version of ['20.20.2', '18.19.0', 'v21.7.3']) {
    const message = unsupportedNode(version);
    t.match(message, /needs Node\.js 22 or 24/, version);
    t.match(message, new RegExp(`this is Node\\.js ${version.replace(/\./g, '\\.')}`), 'names the running version');
    t.match(message, /use-node24\.sh/, 'says how to get one');
  }
});

/** A node binary on this machine older than 22 (a system Node 20 beside the Node 24 the tests run on). */
function olderNode(): string | null {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node', '/bin/node']) {
    if (!fs.existsSync(candidate) || fs.realpathSync(candidate) === fs.realpathSync(process.execPath)) continue;
    const probe = spawnSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    if (probe.status === 0 && Number(probe.stdout.split('.')[0]) < 22) return candidate;
  }
  return null;
}

const older = olderNode();
t.test('started on an older Node, the server and the CLI stop with that message, not a native crash', { skip: older ? false : 'no Node older than 22 on this machine to start them with' }, async (t) => {
  const env = { ...process.env, DATA_DIR: tempDataDir(t), PORT: '0', NODE_OPTIONS: '' };
  for (const entry of [nodeArgs('src/server.ts'), [built('src/admin/cli.ts'), 'site', 'list']]) {
    const run = spawnSync(older!, entry, { encoding: 'utf8', env, timeout: 30_000 });
    t.equal(run.status, 1, 'exit code 1');
    t.equal(run.signal, null, 'no signal (no abort)');
    t.match(run.stderr, /needs Node\.js 22 or 24 .*this is Node\.js 2?[0-9]\./);
    t.equal(run.stderr.trim().split('\n').length, 1, 'one line');
  }
});
