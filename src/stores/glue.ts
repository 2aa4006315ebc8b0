/*
 * glue until jobs and webhooks land: runs code written for one database's transaction (the
 * webhooks outbox's listeners) as a step of another store's write. Goes when every listener is steps.
 */
export interface GluePort {
  call(run: (tx: never) => unknown): unknown;
}

declare module '../db/steps.js' {
  interface Ports {
    glue: GluePort;
  }
}

export const glue = {
  call: (tx: unknown, run: (tx: never) => unknown) => run(tx as never),
};
export const asyncGlue = {
  call: async (tx: unknown, run: (tx: never) => unknown) => run(tx as never),
};
