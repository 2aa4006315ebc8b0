import { createHmac, randomBytes } from 'node:crypto';
import { WEBHOOK_SECRET_BYTES } from '../limits.js';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the secret is `whsec_` + the
 * base64 of random bytes; a signature is `v1,` + base64(HMAC-SHA256(key, `id.timestamp.body`))
 * with the decoded bytes as key. Several signatures (during a secret rotation) are separated
 * by spaces; a receiver accepts the message when any one of them verifies.
 */
export const SECRET_PREFIX = 'whsec_';

export const newSecret = () => SECRET_PREFIX + randomBytes(WEBHOOK_SECRET_BYTES).toString('base64');

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The three headers of a delivery attempt, signed with every secret given (newest first). */
export function signedHeaders(secrets: readonly string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((secret) => sign(secret, id, timestampSeconds, body)).join(' '),
  };
}
