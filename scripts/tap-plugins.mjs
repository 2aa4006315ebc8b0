// Run before `npm test` and `npm run coverage`: tap builds its test class from the plugins
// .taprc names, but when they differ from the installed build it rebuilds only after choosing
// the test processes' arguments, so a fresh install's first run would still load the plugin
// .taprc leaves out (@tapjs/mock, which hooks every module a test process loads). This builds
// it first, only when the installed build differs (about 8 s, once per install).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { TapConfig } from '@tapjs/config';
import { signature } from '@tapjs/test';

const config = await TapConfig.load();
if (config.pluginSignature !== signature) {
  const tap = createRequire(import.meta.url).resolve('tap/package.json').replace(/package\.json$/, 'dist/esm/run.mjs');
  console.error(`tap-plugins: building tap's test class for the plugins .taprc names`);
  const built = spawnSync(process.execPath, [tap, 'build'], { stdio: 'inherit' });
  process.exit(built.status ?? 1);
}
