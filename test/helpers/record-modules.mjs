// Put in the NODE_OPTIONS of a process a test starts (`--import`): when that process exits, the
// file RECORD_MODULES_TO lists every file it loaded from node_modules, by its path in there
// (`sharp/lib/index.js`), whether by import or require.
import fs from 'node:fs';
import { registerHooks } from 'node:module';

const out = process.env.RECORD_MODULES_TO;
const loaded = new Set();
registerHooks({
  load(url, context, nextLoad) {
    const inModules = url.match(/\/node_modules\/(.*)$/);
    if (inModules) loaded.add(decodeURIComponent(inModules[1]));
    return nextLoad(url, context);
  },
});
if (out) process.on('exit', () => fs.writeFileSync(out, JSON.stringify([...loaded])));
