import { createHash, type Hash } from 'node:crypto';

/** JSON with object keys sorted at every level: the same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
}

/** What "the same request" means for a JSON body: the same route and the same body, whatever its key order. */
export function jsonFingerprint(route: string, body: unknown): string {
  return createHash('sha256').update(`${route}\n`).update(canonicalJson(body)).digest('base64url');
}

/** The boundary of a multipart/form-data body, from its Content-Type. */
export function multipartBoundary(contentType: string | undefined): string | null {
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  return match ? (match[1] ?? match[2]) : null;
}

/**
 * Hashes a multipart body as it streams past, leaving out every occurrence of its boundary:
 * clients pick a new random boundary for each send, so a retry of the same upload (same file,
 * same name, same parts) has the same fingerprint though its bytes differ there.
 */
export class MultipartFingerprint {
  private readonly hash: Hash;
  private readonly needle: Buffer;
  private carry = Buffer.alloc(0);
  private result: string | null = null;
  bytes = 0;

  constructor(route: string, boundary: string | null) {
    this.hash = createHash('sha256').update(`${route}\nmultipart\n`);
    this.needle = Buffer.from(boundary ?? '', 'latin1');
  }

  update(chunk: Buffer): void {
    if (this.result !== null) return;
    this.bytes += chunk.length;
    if (this.needle.length === 0) {
      this.hash.update(chunk);
      return;
    }
    const buffer = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    let start = 0;
    for (let at = buffer.indexOf(this.needle, start); at !== -1; at = buffer.indexOf(this.needle, start)) {
      this.hash.update(buffer.subarray(start, at));
      start = at + this.needle.length;
    }
    // The tail might be the start of a boundary cut by the chunk's end: kept for the next chunk.
    const keep = Math.min(this.needle.length - 1, buffer.length - start);
    this.hash.update(buffer.subarray(start, buffer.length - keep));
    this.carry = Buffer.from(buffer.subarray(buffer.length - keep));
  }

  end(): string {
    if (this.result === null) {
      this.hash.update(this.carry);
      this.result = this.hash.digest('base64url');
    }
    return this.result;
  }

  /** The fingerprint once the whole body went past, else null. */
  get digest(): string | null {
    return this.result;
  }
}
