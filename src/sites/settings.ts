import type { Executor } from '../db/client.js';
import type { Site } from '../db/schema.js';
import { sqliteSites } from './sqlite.js';

// glue until posts and the public site land: they ask the sites port ('touchContent',
// 'byHandle', 'byHost') in their own steps; these answer their SQLite code as before.

/** Moves the site's content version; answers the new one. */
export const touchSiteContent = (db: Executor, siteId: string, now = new Date()): number => sqliteSites.touchContent(db, siteId, now);

/** The site readers reach at /sites/<handle>/. */
export const findSiteByHandle = (db: Executor, handle: string): Site | undefined => sqliteSites.byHandle(db, handle);

/** The site whose own, proven `url` has this host. */
export const findSiteByHost = (db: Executor, host: string): Site | undefined => sqliteSites.byHost(db, host);
