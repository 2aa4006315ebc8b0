import pg from 'pg';

/** The channel the sites table's trigger (PostgreSQL migration 0014) tells content versions on: `<site id> <version>`. */
export const CONTENT_VERSION_CHANNEL = 'blog_content_version';

/**
 * The channel a post write tells, in its own transaction, which post the version it made changed:
 * `<site id> <version> <post id>` (src/posts/postgres.ts, recordChange). Delivered when, and only
 * if, the write commits: what every instance's posts' JSON cache learns of other instances' writes.
 */
export const POST_CHANGE_CHANNEL = 'blog_post_change';

/** Told a committed post change of any instance: the site, the version it made, the post it changed. */
export type PostChangeListener = (siteId: string, version: number, postId: string) => void;

/**
 * A version a write of this instance made that the database still does not show after this
 * long was rolled back (a write holds its transaction for milliseconds after moving it): reads
 * stop asking the database for its sake.
 */
const ROLLED_BACK_AFTER_MS = 10_000;

/** The longest a fence may take before the reads waiting on it ask the database instead. */
const FENCE_TIMEOUT_MS = 1000;

/** The longest wait between two attempts to listen again after the listening connection was lost. */
const RECONNECT_MAX_MS = 1000;

/**
 * Sites' content versions as this instance knows them without asking the database: every
 * change to a site's `content_version`, by any instance or writer, is told on
 * CONTENT_VERSION_CHANNEL in the transaction that makes it (a trigger: the notification is
 * delivered when, and only if, it commits). A read of the version (posts' JSON kept per
 * version, see PostJsonCache) is then answered here, with no round trip, as long as:
 *
 * - this instance listens, and listened already when the version it holds was learned (so any
 *   later commit's notification is on its way), and a fence (below) begun after the read asked
 *   has passed: every notification of a commit answered before then has arrived, so a write on
 *   any instance shows on all once its writer answered. Fences are one round trip on the
 *   listening connection shared by every read waiting meanwhile (no connection of the pool, no
 *   statement on a table), instead of a query per read;
 * - no write of this instance has moved the site past it (`moving`, set inside the writing
 *   transaction before it commits: until the version it wrote is learned, from the database or
 *   from its notification, reads of the site ask the database, so an instance always reads its
 *   own writes).
 *
 * When the listening connection is lost (the server restarted, say) everything held is
 * forgotten and every read asks the database, as without this, until it listens again.
 */
export class PgContentVersions {
  private readonly known = new Map<string, number>();
  /** Per site, the newest version a write of this instance made (committed or not yet). */
  private readonly floor = new Map<string, { version: number; at: number }>();
  /** Moves whenever listening stops: a version read before that may have missed a notification. */
  private epoch = 0;
  private listening = false;
  private client: pg.Client | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private retryMs = 50;
  private started: Promise<void> | null = null;
  private waiting: ((ok: boolean) => void)[] = [];
  private fencing = false;
  private readonly postChangeListeners: PostChangeListener[] = [];

  constructor(private readonly url: string) {}

  /** Starts listening (in the background; answers once the first attempt ended, whatever its outcome). */
  start(): Promise<void> {
    this.started ??= this.connect();
    return this.started;
  }

  /** Whether this instance listens now (tests, /ready). */
  get isListening(): boolean {
    return this.listening;
  }

  /** The site's version, when this instance can vouch for it without asking; else undefined. */
  current(siteId: string): number | undefined {
    if (!this.listening) return undefined;
    const version = this.known.get(siteId);
    if (version === undefined) return undefined;
    const floor = this.floor.get(siteId);
    return floor !== undefined && floor.version > version ? undefined : version;
  }

  /**
   * Resolves true once every notification committed before the call has been received: a
   * round trip on the listening connection (PostgreSQL signals listeners when a notifying
   * transaction commits, before its writer hears the commit answered, and a listening backend
   * sends what it was signalled before answering its next query). Concurrent callers share
   * round trips: a caller waits for the first one that begins after it. False when not
   * listening (then the database must be asked).
   */
  fence(): Promise<boolean> {
    if (!this.listening) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      if (!this.fencing) void this.runFences();
    });
  }

  private async runFences(): Promise<void> {
    this.fencing = true;
    while (this.waiting.length) {
      const batch = this.waiting;
      this.waiting = [];
      const client = this.client;
      let ok = false;
      if (this.listening && client) {
        let timer: NodeJS.Timeout | undefined;
        try {
          // A connection that stops answering without closing (a network partition) must not hold reads: they ask the database.
          const late = new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('fence timed out')), FENCE_TIMEOUT_MS);
          });
          await Promise.race([client.query('select 1'), late]);
          ok = this.listening && this.client === client;
        } catch {
          ok = false;
        } finally {
          clearTimeout(timer);
        }
      }
      for (const resolve of batch) resolve(ok);
    }
    this.fencing = false;
  }

  /** A token to hand to `learn` with the version a read outside any transaction is about to fetch. */
  beforeRead(): number | null {
    return this.listening ? this.epoch : null;
  }

  /** The version a read (begun at `token`, outside any transaction: committed data) found. */
  learn(siteId: string, version: number, token: number | null): void {
    const floor = this.floor.get(siteId);
    if (floor !== undefined && version < floor.version && performance.now() - floor.at > ROLLED_BACK_AFTER_MS) this.floor.delete(siteId);
    if (token === null || token !== this.epoch || !this.listening) return;
    this.raise(siteId, version);
  }

  /** A write of this instance moved the site to `version` (inside its transaction, before it commits). */
  moving(siteId: string, version: number): void {
    const floor = this.floor.get(siteId);
    if (floor === undefined || version > floor.version) this.floor.set(siteId, { version, at: performance.now() });
  }

  /** Calls `listener` with every committed post change this instance hears of while it listens (its own too). */
  onPostChange(listener: PostChangeListener): void {
    this.postChangeListeners.push(listener);
  }

  /** Stops listening for good (before the pool closes). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.lost();
    await this.started?.catch(() => {});
  }

  private raise(siteId: string, version: number): void {
    const held = this.known.get(siteId);
    if (held === undefined || version > held) this.known.set(siteId, version);
    const floor = this.floor.get(siteId);
    if (floor !== undefined && version >= floor.version) this.floor.delete(siteId);
  }

  private lost(): void {
    this.listening = false;
    this.epoch++;
    this.known.clear();
    const client = this.client;
    this.client = null;
    if (client) {
      client.removeAllListeners('notification');
      client.end().catch(() => {});
    }
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5000 });
    this.client = client;
    const onLost = () => {
      if (this.client !== client) return;
      this.lost();
      this.retry();
    };
    client.on('error', onLost);
    client.on('end', onLost);
    client.on('notification', ({ channel, payload }) => {
      // Ids hold no spaces.
      const [siteId, told, postId] = payload?.split(' ') ?? [];
      const version = Number(told);
      if (!siteId || !Number.isSafeInteger(version)) return;
      if (channel === CONTENT_VERSION_CHANNEL) this.raise(siteId, version);
      else if (channel === POST_CHANGE_CHANNEL && postId) for (const listener of this.postChangeListeners) listener(siteId, version, postId);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CONTENT_VERSION_CHANNEL}; LISTEN ${POST_CHANGE_CHANNEL}`);
      if (this.client !== client || this.closed) return;
      // Only versions read from now on are vouched for: what was held before was forgotten when listening stopped.
      this.epoch++;
      this.listening = true;
      this.retryMs = 50;
    } catch {
      onLost();
    }
  }

  private retry(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, this.retryMs);
    this.timer.unref();
    this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
  }
}
