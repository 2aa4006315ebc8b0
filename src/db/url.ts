// Kept apart from postgres.ts (and its driver) so the configuration can mask URLs in its errors.

/** Where the data lives, from DATABASE_URL (see databaseTarget in config.ts). */
export type DatabaseTarget =
  /** `path` null: the default, DATA_DIR/blog.db. */
  | { kind: 'sqlite'; path: string | null }
  | { kind: 'postgres'; url: string; poolMax: number };

/** `url` with its password (in the user part or a `password` parameter) replaced by `***`. */
export function maskDatabaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL (a password with an unencoded `/`, say): everything up to the last `@` may be secret.
    return url.replace(/^([a-z][a-z0-9+.-]*:\/\/).*@/i, '$1***@').replace(/(password=)[^&#]*/gi, '$1***');
  }
  if (parsed.password) parsed.password = '***';
  for (const key of [...parsed.searchParams.keys()]) {
    if (/password/i.test(key)) parsed.searchParams.set(key, '***');
  }
  // No fragment is meaningful here: one is the tail of a password with an unencoded `#`.
  if (parsed.hash) parsed.hash = '***';
  return parsed.toString();
}
