import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Role } from '../../src/accounts/rules.js';
import type { TestApp } from './app.js';

/** The service's own origin as app.inject addresses it (Host: localhost:80). */
export const OWN_ORIGIN = 'http://localhost';
export const PASSWORD = 'correct horse battery';

/** A staff user of the site (the test app's own unless given), with a password set. */
export async function addUser(ctx: TestApp, email: string, role: Role, siteId = ctx.site.id, password = PASSWORD) {
  return (await ctx.app.accounts.addMember(siteId, email, role, password)).user;
}

/** The session cookie a response sets (`blog_session`, or `__Host-blog_session` behind an https PUBLIC_BASE_URL), or null. */
export function sessionCookie(res: LightMyRequestResponse): string | null {
  const cookie = res.cookies.find((c) => c.name === 'blog_session' || c.name === '__Host-blog_session');
  return cookie ? cookie.value : null;
}

export async function signIn(ctx: TestApp, email: string, password = PASSWORD): Promise<string> {
  const res = await ctx.call({ method: 'POST', url: '/api/v1/auth/sign-in', key: null, payload: { email, password } });
  const cookie = sessionCookie(res);
  if (res.statusCode !== 200 || !cookie) throw new Error(`sign-in failed: ${res.statusCode} ${res.body}`);
  return cookie;
}

/** A request with the session cookie and no key, from the service's own origin unless `origin` says otherwise (null: none). */
export function asUser(ctx: TestApp, cookie: string, options: InjectOptions & { origin?: string | null }): Promise<LightMyRequestResponse> {
  const { origin = OWN_ORIGIN, headers, ...rest } = options;
  return ctx.call({ ...rest, key: null, headers: { ...(origin === null ? {} : { origin }), cookie: `${ctx.app.sessionCookie}=${cookie}`, ...headers } } as InjectOptions & { key: null });
}
