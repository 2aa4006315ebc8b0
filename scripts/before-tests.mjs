// Run by tap before any test file (.taprc's `before`, with the tests' node options, so the
// TypeScript loader too): builds what the tests start as processes (build-for-tests.mjs), then
// starts the suite's shared PostgreSQL cluster (test/helpers/postgres-cluster.ts), which
// after-tests.mjs stops.
/* c8 ignore start */
await import('./build-for-tests.mjs');
const { startSharedCluster } = await import('../test/helpers/postgres-cluster.ts');
const started = Date.now();
try {
  const shared = await startSharedCluster();
  if (shared) console.error(`before-tests: shared PostgreSQL on port ${shared.port} (${Date.now() - started} ms)`);
} catch (error) {
  // Each PostgreSQL test file then starts a cluster of its own, as without the shared one.
  console.error(`before-tests: the shared PostgreSQL did not start (${error instanceof Error ? error.message : error}); each file starts its own`);
}
/* c8 ignore stop */
