// Several instances of the real server on one database, and calls to them (PostgreSQL tests).
import type { Test } from 'tap';
import { BOOTSTRAP_KEY, startService, tempDataDir, waitFor, type Service } from './app.js';

export interface Answer {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

export async function call(service: Service, method: string, url: string, options: { body?: unknown; headers?: Record<string, string>; key?: string | null; raw?: Buffer } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== null) headers.authorization = `Bearer ${options.key ?? BOOTSTRAP_KEY}`;
  let body: BodyInit | undefined;
  if (options.raw) body = new Uint8Array(options.raw);
  else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const response = await fetch(`${service.url}${url}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // a page or a feed
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** Instances of the server on one database and store, each with a DATA_DIR of its own; stopped when the test ends. */
export async function startInstances(t: Test, count: number, env: Record<string, string>): Promise<Service[]> {
  const services = await Promise.all(
    Array.from({ length: count }, () => startService({ DATA_DIR: tempDataDir(t), GENERATOR: 'builtin', BUILTIN_WORKERS: '0', JOB_POLL_MS: '100', ...env })),
  );
  // The first site is created once the server listens (the first instance to get there makes it).
  for (const service of services) await waitFor(async () => (await call(service, 'GET', '/api/v1/site')).status === 200, 'the bootstrap key to work');
  t.teardown(async () => {
    for (const service of services) {
      if (service.child.exitCode === null) service.child.kill('SIGKILL');
      await service.exited;
    }
  });
  return services;
}

