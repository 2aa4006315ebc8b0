// `npm run openapi`: writes openapi.json (what /docs/json serves) and the typed client's types
// from the built app, without starting a network server.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { default: blogApp, serverOptions } = await import(path.join(root, 'dist/src/app.js'));
const { loadConfig } = await import(path.join(root, 'dist/src/config.js'));
const { writeOpenApi, DOCUMENT_FILE, CLIENT_TYPES_FILE } = await import(path.join(root, 'dist/src/client/generate.js'));

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'blog-openapi-'));
try {
  const config = loadConfig({ DATA_DIR: dataDir, GENERATOR: 'builtin', LOG_LEVEL: 'silent' });
  const app = Fastify(serverOptions(config, false));
  await app.register(blogApp, { config });
  await app.ready();
  await writeOpenApi(app.swagger(), root);
  await app.close();
  console.log(`wrote ${DOCUMENT_FILE} and ${CLIENT_TYPES_FILE}`);
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}
