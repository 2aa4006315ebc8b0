/**
 * Imported first by every entry point (server, CLI): on a Node.js line the service does not
 * support, it stops with a message that says what to do, before any native module loads (an
 * older Node would otherwise end in a crash inside better-sqlite3 with no useful message).
 */
export const SUPPORTED_NODE = 'Node.js 22 or 24 (the maintained LTS lines)';
export const MINIMUM_NODE_MAJOR = 22;

/** Why this Node cannot run the service, or null when it can. */
export function unsupportedNode(version: string): string | null {
  const major = Number(version.replace(/^v/, '').split('.')[0]);
  if (Number.isInteger(major) && major >= MINIMUM_NODE_MAJOR) return null;
  return (
    `This service needs ${SUPPORTED_NODE}; this is Node.js ${version}. ` +
    'Install Node 24 (https://nodejs.org, your package manager, or `source scripts/use-node24.sh` in a clone), then run `npm ci` again so native modules are built for it.'
  );
}

const problem = unsupportedNode(process.versions.node);
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
