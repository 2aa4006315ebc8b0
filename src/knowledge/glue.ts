import { ask, type Steps } from '../db/steps.js';

// glue until webhooks and jobs land: their stores still take a database's transaction, not
// steps. A knowledge file's settled listener hands them the transaction the steps run in; the
// lead removes this module (and its two adapters, in sqlite.ts and postgres.ts) once their
// listeners are steps of their own.

export interface KnowledgeGluePort {
  /** Calls `run` with the transaction the steps run in (awaiting it on PostgreSQL). */
  inTransaction(run: (tx: never) => unknown): void;
}

declare module '../db/steps.js' {
  interface Ports {
    knowledgeGlue: KnowledgeGluePort;
  }
}

/** Steps that call `run` with the database's own transaction (`Tx`: Executor on SQLite, PgExecutor on PostgreSQL). */
export const inTransaction = <Tx>(run: (tx: Tx) => unknown): Steps<void> => ask('knowledgeGlue', 'inTransaction', run as (tx: never) => unknown);
