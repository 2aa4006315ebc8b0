import type { Executor } from '../../src/db/sqlite.js';
import { sqliteStepDatabase } from '../../src/db/sqlite-steps.js';
import type { Site } from '../../src/db/schema.js';
import type { Steps } from '../../src/db/steps.js';
import { generateKey } from '../../src/sites/rules.js';
import { createSiteSteps, createSiteWithKeySteps } from '../../src/sites/store.js';
import { sqliteAdapters } from '../../src/stores/sqlite.js';

// The sites store's steps answered at once by a SQLite database or one of its transactions: for
// tests that set up sites, or write one as a job's effect inside the job's transaction.

const runIn = <T>(db: Executor, steps: Steps<T>): T => sqliteStepDatabase(db, sqliteAdapters).runIn(db, steps);

export const createSite = (db: Executor, name: string, now = new Date()): Site => runIn(db, createSiteSteps(name, now));

export const createSiteWithKey = (db: Executor, name: string, key = generateKey(), now = new Date()): { site: Site; key: string } =>
  runIn(db, createSiteWithKeySteps(name, key, now));
