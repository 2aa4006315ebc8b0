import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../src/errors.js';

/**
 * The admin web UI at /admin/: a static HTML shell and its ES modules, stylesheet and icon from
 * the top-level `admin/` folder, with no build step. At start-up every asset gets a content hash
 * in its name (`app.3f9c1a2b7d.js`), imports between modules and the shell's references are
 * rewritten to those names, and the assets are then cached for a year; the shell is never cached.
 * The UI talks to the REST API like any client, signed in by its session cookie.
 */

/** `<package root>/admin`, found from this file whether it runs from plugins/ (tests) or dist/plugins/. */
export function adminFolder(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const candidate = path.join(dir, 'admin');
    if (fs.existsSync(path.join(candidate, 'index.html'))) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error('admin/ UI folder not found');
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export const ASSET_PREFIX = '/admin/assets/';

/**
 * Scripts, styles and images only from the service itself (no inline script, no eval; no image
 * elsewhere that could tell anyone who opened a screen); the API is the only thing fetched; only
 * the service's own pages are framed (the editor's preview, under a policy of its own); no page
 * may frame the UI.
 */
export const ADMIN_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  // The editor's preview frames the post's page as readers get it (GET /api/v1/posts/:id/page).
  "frame-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface AdminFile {
  body: Buffer;
  /** SHA-256 of the body: the key its compressed forms are kept under. */
  digest: string;
  type: string;
}

export interface AdminAssets {
  /** The shell with fingerprinted references, and every module preloaded (no import waterfall). */
  shell: string;
  /** Fingerprinted file name → body and type (compressed on first request: see `encodedBody`). */
  files: Map<string, AdminFile>;
  /** Plain name → fingerprinted name. */
  names: Map<string, string>;
}

const IMPORT = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])\.\/([\w-]+\.js)\2/g;

/**
 * Compressed bodies by encoding and content hash, made on the first request that asks for them:
 * Brotli at its best quality takes ~0.3 s of CPU for the whole UI, which a start-up (and every
 * app a test builds) would otherwise pay before anyone opens the admin. An asset that did not
 * change since is not compressed again in this process.
 */
const compressedByHash = new Map<string, Buffer>();

/** The file's body in `encoding`, compressed once per process. */
export function encodedBody(file: AdminFile, encoding: 'br' | 'gzip'): Buffer {
  const key = `${encoding}:${file.digest}`;
  let compressed = compressedByHash.get(key);
  if (!compressed) {
    compressed =
      encoding === 'br'
        ? zlib.brotliCompressSync(file.body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: file.body.length } })
        : zlib.gzipSync(file.body, { level: 9 });
    compressedByHash.set(key, compressed);
  }
  return compressed;
}

/** Reads and fingerprints the UI once; the modules' imports form a tree (a cycle is a mistake, reported). */
export function loadAdminAssets(folder = adminFolder()): AdminAssets {
  const names = new Map<string, string>();
  const files = new Map<string, AdminFile>();
  const visiting = new Set<string>();
  const assets = fs.readdirSync(folder).filter((name) => name !== 'index.html' && TYPES[path.extname(name)]);

  const fingerprint = (name: string): string => {
    const done = names.get(name);
    if (done) return done;
    if (!assets.includes(name)) throw new Error(`admin/: ${name} is imported but missing`);
    if (visiting.has(name)) throw new Error(`admin/: import cycle through ${name}`);
    visiting.add(name);
    const ext = path.extname(name);
    let body = fs.readFileSync(path.join(folder, name));
    if (ext === '.js') body = Buffer.from(body.toString('utf8').replace(IMPORT, (_m, head: string, quote: string, dep: string) => `${head}${quote}./${fingerprint(dep)}${quote}`));
    const digest = createHash('sha256').update(body).digest('hex');
    const hash = digest.slice(0, 10);
    const hashed = `${path.basename(name, ext)}.${hash}${ext}`;
    visiting.delete(name);
    names.set(name, hashed);
    files.set(hashed, { body, digest, type: TYPES[ext] });
    return hashed;
  };
  for (const name of assets) fingerprint(name);

  const shell = fs.readFileSync(path.join(folder, 'index.html'), 'utf8').replace(/\/admin\/assets\/([\w.-]+)/g, (whole, name: string) => {
    const hashed = names.get(name);
    if (!hashed) throw new Error(`admin/index.html refers to ${whole}, which admin/ does not hold`);
    return ASSET_PREFIX + hashed;
  });
  const preloads = [...names.entries()]
    .filter(([name]) => name.endsWith('.js') && !shell.includes(`${ASSET_PREFIX}${names.get(name)}"`))
    .map(([, hashed]) => `<link rel="modulepreload" href="${ASSET_PREFIX}${hashed}">`)
    .join('\n');
  return { shell: preloads ? shell.replace('</head>', `${preloads}\n</head>`) : shell, files, names };
}

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The best of brotli and gzip the client accepts (a zero q-value refuses), or none. */
export function acceptedEncoding(header: string | string[] | undefined): 'br' | 'gzip' | null {
  const accepted = new Set(
    String(header ?? '')
      .split(',')
      .map((part) => part.trim().split(';'))
      .filter(([, ...params]) => !params.some((param) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(param)))
      .map(([name]) => name.trim().toLowerCase()),
  );
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip')) return 'gzip';
  return null;
}

export default fp(
  async function adminUiPlugin(app: FastifyInstance) {
    const assets = loadAdminAssets();

    await app.register(async (admin) => {
      // Every answer under /admin (errors too): the policy, no referrer to other origins, no sniffing.
      admin.addHook('onSend', (_request, reply: FastifyReply, payload, done) => {
        reply.header('Content-Security-Policy', ADMIN_CSP);
        reply.header('Referrer-Policy', 'same-origin');
        reply.header('X-Content-Type-Options', 'nosniff');
        reply.header('X-Frame-Options', 'DENY');
        reply.header('Cross-Origin-Opener-Policy', 'same-origin');
        if (!reply.hasHeader('Cache-Control') || reply.statusCode >= 400) reply.header('Cache-Control', 'no-store');
        done(null, payload);
      });

      // The UI and its session cookie live on the service's own host only: on a tenant's own
      // domain (which serves that tenant's pages) /admin/ goes to the service's address.
      const ownHost = new URL(app.serviceBaseUrl).host.toLowerCase();
      admin.addHook('onRequest', async (request, reply) => {
        const host = request.headers.host?.toLowerCase().replace(/:(80|443)$/, '');
        if (!host || host === ownHost || !(await app.publicSite.byHost(host))) return;
        return reply.code(302).header('Location', `${app.serviceBaseUrl}${request.url}`).header('Cache-Control', 'no-store').send();
      });

      // Without a session cookie the shell says so, and the UI shows the sign-in screen without
      // first asking the API for a session it cannot have (a 401 in the browser's console).
      const signedOutShell = assets.shell.replace('<head>', '<head>\n<meta name="admin-session" content="none">');
      const cookiePattern = new RegExp(`(?:^|;\\s*)${app.sessionCookie}=`);
      const sendShell = (request: FastifyRequest, reply: FastifyReply) => {
        const hasCookie = cookiePattern.test(request.headers.cookie ?? '');
        return reply.header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(hasCookie ? assets.shell : signedOutShell);
      };

      admin.get('/admin', { schema: { hide: true } }, (_request, reply) => reply.redirect('/admin/', 308));
      admin.get('/admin/', { schema: { hide: true } }, (request, reply) => sendShell(request, reply));
      // Any other path the UI's router shows (/admin/posts/…, /admin/setup) loads the same shell.
      admin.get('/admin/*', { schema: { hide: true } }, (request, reply) => sendShell(request, reply));
      admin.get<{ Params: { file: string } }>('/admin/assets/:file', { schema: { hide: true } }, (request, reply) => {
        const file = assets.files.get(request.params.file);
        if (!file) throw new AppError(404, 'NOT_FOUND', 'No such admin asset');
        reply.header('Cache-Control', IMMUTABLE).header('Vary', 'Accept-Encoding').type(file.type);
        const encoding = acceptedEncoding(request.headers['accept-encoding']);
        if (encoding) reply.header('Content-Encoding', encoding);
        return reply.send(encoding ? encodedBody(file, encoding) : file.body);
      });
    });
  },
  { name: 'admin-ui', dependencies: ['accounts', 'public-site'] },
);
