import { randomBytes } from 'node:crypto';
import { hash, verify, type Algorithm } from '@node-rs/argon2';

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

export const hashPassword = (password: string): Promise<string> => hash(password, ARGON2_OPTIONS);

let dummy: Promise<string> | null = null;

/**
 * Checks a password against a stored hash. Without one (unknown email, no password set yet)
 * it checks against a hash of a random password instead, so that an unknown email costs the
 * same time as a wrong password and answers the same: false.
 */
export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (stored === null) {
    dummy ??= hashPassword(randomBytes(16).toString('base64url'));
    await verify(await dummy, password).catch(() => false);
    return false;
  }
  try {
    return await verify(stored, password);
  } catch {
    // A corrupt stored hash is a wrong password, not a server fault the caller could probe.
    return false;
  }
}
