import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { normalizeModelName } from '../../src/ollama-models.js';

// ---------------------------------------------------------------------------------------------
// A fake Ollama speaking the wire protocol: GET /api/tags, POST /api/chat streamed as NDJSON.
// ---------------------------------------------------------------------------------------------

export interface ChatBody {
  model: string;
  messages: { role: string; content: string }[];
  stream: boolean;
  format: unknown;
  options?: Record<string, unknown>;
}

/** Answers one chat call; `call` counts from 1. */
export type ChatHandler = (call: number, body: ChatBody, req: IncomingMessage, res: ServerResponse) => void;

export interface FakeOllama {
  url: string;
  /** Installed models; tests may change it while the server runs. */
  models: string[];
  chatBodies: ChatBody[];
  tagRequests: number;
  /** Resolves once n chat requests have arrived. */
  chatsArrived(n: number): Promise<void>;
  /** Resolves once n chat connections have closed (answered or dropped). */
  chatsClosed(n: number): Promise<void>;
  close(): Promise<void>;
}

/** A count that can be awaited: reached(n) resolves once it is at least n. */
export function awaitableCount() {
  let count = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  return {
    increment() {
      count++;
      for (const waiter of waiters.filter((w) => w.n <= count)) waiter.resolve();
    },
    reached(n: number): Promise<void> {
      return count >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }));
    },
  };
}

export const validPost = {
  title: 'Brewing Better Coffee',
  description: 'How grind and water shape the cup.',
  category: 'Food & Drink',
  tags: ['coffee', 'brewing', 'Coffee', ' grind '],
  content: '## Grind\n\nA finer grind extracts faster (source: coffee-brewing-guide.md).',
};

export function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Streams `content` the way Ollama does: a few message pieces, then a done line. */
export function streamAnswer(res: ServerResponse, model: string, content: string) {
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  const created_at = '2025-01-01T00:00:00Z';
  const size = Math.ceil(content.length / 3) || 1;
  for (let i = 0; i < content.length; i += size) {
    const piece = { model, created_at, message: { role: 'assistant', content: content.slice(i, i + size) }, done: false };
    res.write(`${JSON.stringify(piece)}\n`);
  }
  const final = { model, created_at, message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', eval_count: 42 };
  res.end(`${JSON.stringify(final)}\n`);
}

export const answerWith =
  (...answers: string[]): ChatHandler =>
  (call, body, _req, res) =>
    streamAnswer(res, body.model, answers[Math.min(call, answers.length) - 1]);

/** Starts the stream, then never finishes it. */
export const hangingAnswer: ChatHandler = (_call, body, _req, res) => {
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  res.write(`${JSON.stringify({ model: body.model, created_at: '2025-01-01T00:00:00Z', message: { role: 'assistant', content: '{"ti' }, done: false })}\n`);
};

export async function startFakeOllama(
  t: Test,
  options: { models?: string[]; chat?: ChatHandler } = {},
): Promise<FakeOllama> {
  const chat = options.chat ?? answerWith(JSON.stringify(validPost));
  const arrived = awaitableCount();
  const closed = awaitableCount();
  const fake: FakeOllama = {
    url: '',
    models: options.models ?? ['llama3.2:latest'],
    chatBodies: [],
    tagRequests: 0,
    chatsArrived: arrived.reached,
    chatsClosed: closed.reached,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const server = http.createServer(async (req, res) => {
    if (req.method === 'GET' && req.url === '/api/tags') {
      fake.tagRequests++;
      const models = fake.models.map((name) => ({ name, model: name, modified_at: '2025-01-01T00:00:00Z', size: 1, digest: 'sha256:0', details: {} }));
      return sendJson(res, 200, { models });
    }
    if (req.method === 'POST' && req.url === '/api/chat') {
      let raw = '';
      for await (const chunk of req) raw += chunk;
      const body = JSON.parse(raw) as ChatBody;
      fake.chatBodies.push(body);
      res.on('close', closed.increment);
      arrived.increment();
      if (!fake.models.some((m) => normalizeModelName(m) === normalizeModelName(body.model))) {
        return sendJson(res, 404, { error: `model '${body.model}' not found` });
      }
      return chat(fake.chatBodies.length, body, req, res);
    }
    sendJson(res, 404, { error: 'not found' });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(() => (server.listening ? fake.close() : undefined));
  return fake;
}

/** An address where nothing listens: a port that was just released. */
export async function closedPortUrl(): Promise<string> {
  const server = http.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return `http://127.0.0.1:${port}`;
}

