import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from './app.js';

export interface Receipt {
  headers: IncomingHttpHeaders;
  body: string;
  /** Date.now() when the request's body had arrived. */
  at: number;
  json(): { type: string; timestamp: string; data: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface Receiver {
  url: string;
  receipts: Receipt[];
  /** Resolves once `count` requests have arrived. */
  received(count: number, timeoutMs?: number): Promise<Receipt[]>;
  close(): Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1: records every request, then answers through `respond`
 * (200 "ok" by default). `respond` may also leave the request unanswered.
 */
export async function startReceiver(
  t: { teardown(fn: () => unknown): void },
  respond: (receipt: Receipt, index: number, res: ServerResponse) => void = (_receipt, _index, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'),
): Promise<Receiver> {
  const receipts: Receipt[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const receipt: Receipt = { headers: req.headers, body, at: Date.now(), json: () => JSON.parse(body) };
      receipts.push(receipt);
      respond(receipt, receipts.length - 1, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  t.teardown(close);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    receipts,
    received: (count, timeoutMs = 20_000) => waitFor(() => receipts.length >= count && receipts, `${count} webhook requests`, timeoutMs),
    close,
  };
}
