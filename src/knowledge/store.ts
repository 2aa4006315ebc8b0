import type { StepDatabase } from '../db/steps.js';
import { ChunkEmbeddings } from './embeddings.js';
import { KnowledgeFiles, type KnowledgeFilesOptions } from './files.js';
import { KnowledgeSearch } from './search.js';
import { SiteStorageUsage } from './usage.js';

/** The knowledge base's stores on one database. */
export interface KnowledgeStores {
  files: KnowledgeFiles;
  search: KnowledgeSearch;
  /** The storage tally, which the files store's writes keep up to date. */
  usage: SiteStorageUsage;
  embeddings: ChunkEmbeddings;
}

/** The knowledge stores over `db` (options: what the database's adapter module suggests, sqliteKnowledgeOptions say). */
export function knowledgeStores(db: StepDatabase, options: Omit<KnowledgeFilesOptions, 'usage'> = {}): KnowledgeStores {
  const usage = new SiteStorageUsage(db);
  return { files: new KnowledgeFiles(db, { ...options, usage }), search: new KnowledgeSearch(db), usage, embeddings: new ChunkEmbeddings(db) };
}
