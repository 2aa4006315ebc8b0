// Run by tap after the last test file (.taprc's `after`): stops the suite's shared PostgreSQL
// cluster that before-tests.mjs started, and removes it.
/* c8 ignore start */
const { stopSharedCluster } = await import('../test/helpers/postgres-cluster.ts');
stopSharedCluster();
/* c8 ignore stop */
