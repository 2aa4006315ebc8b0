// The UI's one door to the REST API: JSON in and out, the session cookie (never an API key),
// and the error envelope turned into a message a person can read.

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

let unauthorized = () => {};

/** What to do when a request finds the session gone (sent to sign in). */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

/**
 * Calls `/api/v1<path>`; resolves to the envelope's `data` (or the whole body when it has none).
 * `options.ifMatch` sends If-Match (a save that must not overwrite another); `options.withEtag`
 * adds the response's ETag to the data as `etag`.
 */
export async function api(method, path, body, options = {}) {
  const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (options.ifMatch) init.headers['If-Match'] = options.ifMatch;
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(`/api/v1${path}`, init);
  } catch {
    throw new ApiError(0, 'NETWORK', 'The service could not be reached. Check the connection and try again.');
  }
  const json = await response.json().catch(() => null);
  if (!response.ok || (json && json.success === false)) {
    const error = json && json.error ? json.error : {};
    let message = error.message || `The request failed (HTTP ${response.status}).`;
    const retry = response.headers.get('Retry-After');
    if (response.status === 429 && retry) message += ` Try again in ${retry} seconds.`;
    if (response.status === 401 && !path.startsWith('/auth/')) unauthorized();
    throw new ApiError(response.status, error.code || `HTTP_${response.status}`, message, error.details);
  }
  const data = json && json.data !== undefined ? json.data : json;
  if (options.withEtag && data && typeof data === 'object') data.etag = response.headers.get('ETag') || data.etag || null;
  return data;
}

/** A query string from the set values of an object. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}
