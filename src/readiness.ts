import type { DbHandle } from './db/client.js';
import type { AppGenerator, GeneratorStatus } from './generation/service.js';

export interface Readiness {
  ready: boolean;
  database: 'ok' | 'unavailable';
  generator: GeneratorStatus;
}

/** What /ready reports: the database must answer; the generator is reported, never blocking. */
export class ReadinessService {
  constructor(
    private readonly database: Pick<DbHandle, 'ping'>,
    private readonly generator: Pick<AppGenerator, 'status'>,
  ) {}

  async check(): Promise<Readiness> {
    let database: Readiness['database'] = 'ok';
    try {
      this.database.ping();
    } catch {
      database = 'unavailable';
    }
    // The generator never makes the service unready: builtin always serves in auto mode.
    return { ready: database === 'ok', database, generator: await this.generator.status() };
  }
}
