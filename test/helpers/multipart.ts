import { randomBytes } from 'node:crypto';

export interface Part {
  name: string;
  filename?: string;
  content: Buffer | string;
  contentType?: string;
}

/** A multipart/form-data body built by hand, so tests control every byte of it. */
export function multipart(parts: Part[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----test${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = part.filename === undefined ? `form-data; name="${part.name}"` : `form-data; name="${part.name}"; filename="${part.filename}"`;
    const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\nContent-Type: ${part.contentType ?? 'application/octet-stream'}\r\n\r\n`;
    chunks.push(Buffer.from(head), Buffer.isBuffer(part.content) ? part.content : Buffer.from(part.content), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
