import { randomBytes } from 'node:crypto';
import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { AppError } from '../errors.js';

/**
 * Passwords are hashed with argon2id at OWASP's current minimum (Password Storage Cheat Sheet:
 * m=19 MiB, t=2, p=1). The parameters are inside each stored hash, so raising them later only
 * affects new hashes.
 */
export const ARGON2_OPTIONS = {
  // Algorithm.Argon2id: a const enum, which an isolated-module compiler cannot inline.
  algorithm: 2 as Algorithm,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

/** Seconds a caller refused by a full hashing queue is told to wait. */
export const HASH_QUEUE_RETRY_AFTER_S = 1;

/**
 * At most `concurrency` tasks at once; up to `queueLimit` more wait their turn, and past that a
 * task is refused (429 with Retry-After) without waiting. argon2 runs on libuv's small thread
 * pool, which file reads share: a burst of sign-ins must not take all of it, nor pile up memory
 * (19 MiB a hash) and latency without bound.
 */
export class HashGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Most tasks seen running at once (for tests and diagnostics). */
  peak = 0;

  constructor(
    readonly concurrency: number,
    readonly queueLimit: number,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.queueLimit) {
        throw new AppError(429, 'RATE_LIMITED', `Too many sign-ins at once: try again in ${HASH_QUEUE_RETRY_AFTER_S} s`, { retryAfter: HASH_QUEUE_RETRY_AFTER_S });
      }
      // The finishing task hands its slot over: `running` stays counted meanwhile.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    this.peak = Math.max(this.peak, this.running);
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

/** The process's one gate for password hashes: 2 at once, 32 waiting. */
export const passwordHashGate = new HashGate(2, 32);

export const hashPassword = (password: string): Promise<string> => passwordHashGate.run(() => hash(password, ARGON2_OPTIONS));

let dummy: Promise<string> | null = null;

/**
 * Checks a password against a stored hash. Without one (unknown email, no password set yet)
 * it checks against a hash of a random password instead, so that an unknown email costs the
 * same time as a wrong password and answers the same: false.
 */
export function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  return passwordHashGate.run(async () => {
    if (stored === null) {
      // Made inside this task's slot (not through hashPassword): a task never waits for a second slot.
      dummy ??= hash(randomBytes(16).toString('base64url'), ARGON2_OPTIONS);
      await verify(await dummy, password).catch(() => false);
      return false;
    }
    try {
      return await verify(stored, password);
    } catch {
      // A corrupt stored hash is a wrong password, not a server fault the caller could probe.
      return false;
    }
  });
}
