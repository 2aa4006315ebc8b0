import type { Site } from '../db/schema.js';
import type { PgExecutor } from '../db/postgres.js';
import { postgresSites } from './postgres.js';

// glue until posts and the public site land: they ask the sites port ('touchContent',
// 'byHandle', 'byHost') in their own steps; these answer their PostgreSQL code as before.

/** Moves the site's content version (an atomic increment). */
export const touchSiteContent = async (db: PgExecutor, siteId: string, now = new Date()): Promise<void> => void (await postgresSites.touchContent(db, siteId, now));

/** The site readers reach at /sites/<handle>/. */
export const findSiteByHandle = (db: PgExecutor, handle: string): Promise<Site | undefined> => postgresSites.byHandle(db, handle);

/** The site whose own, proven `url` has this host. */
export const findSiteByHost = (db: PgExecutor, host: string): Promise<Site | undefined> => postgresSites.byHost(db, host);
