/**
 * Query parameters whose values are secrets a client may put in a URL (a key, a token): their
 * values never reach the log. Matched without regard to case.
 */
export const SECRET_QUERY_PARAMETERS = ['key', 'apikey', 'api_key', 'api-key', 'token', 'access_token', 'refresh_token', 'id_token', 'secret', 'client_secret', 'password', 'passwd', 'pwd', 'auth', 'authorization', 'signature', 'sig', 'code'];

const SECRET = new Set(SECRET_QUERY_PARAMETERS);

/** `url` as it may be logged: the values of secret query parameters replaced by `[REDACTED]`. */
export function redactUrl(url: string): string {
  const at = url.indexOf('?');
  if (at === -1) return url;
  const parts = url
    .slice(at + 1)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      const rawName = eq === -1 ? part : part.slice(0, eq);
      let name: string;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        name = rawName;
      }
      return SECRET.has(name.trim().toLowerCase()) && eq !== -1 ? `${rawName}=[REDACTED]` : part;
    });
  return `${url.slice(0, at)}?${parts.join('&')}`;
}
