// The hooks of transpile-cache.mjs (they run on Node's module loader thread).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = path.join(root, 'node_modules/.cache/tap-transpile');
const require = createRequire(import.meta.url);
const version = (name) => {
  try {
    return require(`${name}/package.json`).version;
  } catch {
    return 'unknown';
  }
};
const read = (file) => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};

// Everything besides a module's own text that its compiled form depends on.
const settings = JSON.stringify([
  process.versions.node,
  version('typescript'),
  version('@tapjs/typescript'),
  read(path.join(root, 'package.json')),
  read(process.env.TS_NODE_PROJECT ?? path.join(root, 'tsconfig.json')),
  Object.entries(process.env)
    .filter(([name]) => /^(TS_NODE_|TAP_TYPE)/.test(name))
    .sort(),
]);

export async function load(url, context, nextLoad) {
  // Only the project's own TypeScript modules, and not those loaded with a query (mocks).
  if (!url.startsWith('file:') || url.includes('?') || !/\.[cm]?tsx?$/.test(url)) return nextLoad(url, context);
  const file = fileURLToPath(url);
  if (file.includes(`${path.sep}node_modules${path.sep}`)) return nextLoad(url, context);
  const text = await fs.promises.readFile(file, 'utf8');
  const key = createHash('sha256').update(JSON.stringify([settings, url, context.format, text])).digest('hex');
  const entry = path.join(dir, key.slice(0, 2), `${key.slice(2)}.json`);
  try {
    const cached = JSON.parse(await fs.promises.readFile(entry, 'utf8'));
    return { format: cached.format, source: cached.source, shortCircuit: true };
  } catch {
    // Not there yet (or unreadable): compile it.
  }
  const result = await nextLoad(url, context);
  if (result.source != null && (result.format === 'module' || result.format === 'commonjs')) {
    try {
      // Written aside and renamed into place: a process reading the entry sees all of it or nothing.
      fs.mkdirSync(path.dirname(entry), { recursive: true });
      const aside = `${entry}.${process.pid}-${Math.random().toString(36).slice(2)}`;
      fs.writeFileSync(aside, JSON.stringify({ format: result.format, source: String(result.source) }));
      fs.renameSync(aside, entry);
    } catch {
      // A cache that cannot be written only costs time.
    }
  }
  return result;
}
