import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyView from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyInstance } from 'fastify';

/**
 * `<package root>/views`, found from this file whether it runs from src/ (tests) or dist/src/
 * (the build copies no templates, so they live outside src/).
 */
export function viewsFolder(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'views');
    if (fs.existsSync(path.join(candidate, 'layout.eta'))) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error('views/ templates folder not found');
}

/** The one stylesheet of the public pages, to serve at `{basePath}/assets/style.css`. */
export function stylesheetFile(): string {
  return path.join(viewsFolder(), 'style.css');
}

/** The pages' icon, to serve at `{basePath}/assets/favicon.svg` (and at `/favicon.ico`'s place for browsers that ask). */
export function iconFile(): string {
  return path.join(viewsFolder(), 'favicon.svg');
}

/** Decorates `app.view(template, data)` (and `reply.view`) with the site templates; autoEscape is Eta's default. */
export async function registerSiteViews(app: FastifyInstance): Promise<void> {
  await app.register(fastifyView, { engine: { eta: new Eta() }, root: viewsFolder(), viewExt: 'eta' });
}
