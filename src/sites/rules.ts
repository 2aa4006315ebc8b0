import { hash, randomBytes, randomUUID } from 'node:crypto';
import type { Site } from '../db/schema.js';
import { ask, type Steps } from '../db/steps.js';
import { conflict, validationError } from '../errors.js';
import {
  MAX_HANDLE_LENGTH,
  MAX_POSTS_PER_PAGE,
  MAX_SITE_DESCRIPTION_LENGTH,
  MAX_SITE_NAME_LENGTH,
  MIN_HANDLE_LENGTH,
  RESERVED_SLUGS,
} from '../limits.js';
import { slugify } from '../text/slug.js';
import { normalizeEmail } from '../newsletters/rules.js';
import { COMMENT_MODES, type CommentMode } from '../limits.js';
import { MAX_BLOCKED_WORD_LENGTH, MAX_BLOCKED_WORDS, normaliseBlockedWords } from '../spam-guard/rules.js';
import { hostnameOf, newDomainToken, type ReservedHosts } from './domains.js';
import { hasVisibleCharacter, isWellFormed } from '../text/wellformed.js';
import type { ApiKeyInfo, AuthenticatedKey, SiteRef } from './port.js';

/*
 * The rules of sites and API keys: what a key, a name, a handle or an address must be, and what
 * a settings patch changes. The store (store.ts) applies them; its adapters only read and write rows.
 */

export const KEY_PREFIX = 'blog_';

export type { ApiKeyInfo, AuthenticatedKey, SiteRef };

/** What a site's owner may change about it (the API's PATCH /site and `site update`). */
export interface SiteSettingsPatch {
  name?: string;
  description?: string | null;
  handle?: string;
  url?: string | null;
  language?: string;
  postsPerPage?: number;
  /** IANA time zone name: the days of the site's analytics. */
  timeZone?: string;
  /** Newsletters: on or off, the sender's name, a Reply-To address, a footer line. */
  newsletter?: NewsletterSettingsPatch;
  /** Readers' comments: off, moderated (the default) or open. */
  comments?: CommentMode;
  /** Words and phrases that mark a comment as spam. */
  blockedWords?: string[];
}

export interface NewsletterSettingsPatch {
  enabled?: boolean;
  senderName?: string | null;
  replyTo?: string | null;
  footer?: string | null;
}

/** A site's newsletter settings as the API shows them. */
export const newsletterSettings = (site: Site) => ({
  enabled: site.newsletterEnabled,
  senderName: site.newsletterSenderName,
  replyTo: site.newsletterReplyTo,
  footer: site.newsletterFooter,
});

export const MAX_SENDER_NAME_LENGTH = 100;
export const MAX_NEWSLETTER_FOOTER_LENGTH = 1000;

// One-shot hashing (every request hashes its key): a third of createHash's cost.
export const hashKey = (key: string) => hash('sha256', key, 'hex');

/** A new API key: `blog_` + 32 random bytes in base64url. Shown once, stored only as a hash. */
export const generateKey = () => KEY_PREFIX + randomBytes(32).toString('base64url');

/** What lists show of a key: enough to tell keys apart, too little to use one. */
export const displayPrefix = (key: string) => key.slice(0, KEY_PREFIX.length + 6);

/** The row of a key about to be stored, and what is shown of it. */
export function newKey(siteId: string, key: string, now: Date): { info: ApiKeyInfo; hash: string } {
  return { info: { id: randomUUID(), siteId, prefix: displayPrefix(key), createdAt: now, revokedAt: null }, hash: hashKey(key) };
}

/** The site's name as stored; a name that is empty or too long is refused. */
export function checkSiteName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_SITE_NAME_LENGTH) throw validationError(`site name must be 1-${MAX_SITE_NAME_LENGTH} characters`);
  return trimmed;
}

/** A new site's row, with the defaults of a fresh site. */
export function newSite(name: string, handle: string, now: Date): Site {
  return {
    id: randomUUID(),
    name,
    handle,
    url: null,
    domainToken: null,
    description: null,
    language: 'en',
    postsPerPage: 10,
    timeZone: 'UTC',
    commentsMode: 'moderated',
    blockedWords: [],
    contentVersion: 0,
    contentUpdatedAt: null,
    newsletterEnabled: false,
    newsletterSenderName: null,
    newsletterReplyTo: null,
    newsletterFooter: null,
    createdAt: now,
  };
}

/** The handle a site's name suggests (`[a-z0-9-]`, 2-40 characters), before making it unique. */
export function handleBase(name: string): string {
  const base = slugify(name).slice(0, MAX_HANDLE_LENGTH).replace(/-+$/, '');
  return base.length < MIN_HANDLE_LENGTH || RESERVED_SLUGS.has(base) ? `site-${base}`.replace(/-+$/, '') : base;
}

/** The base, else `<base>-2`, `<base>-3`...: the first not in `taken` (the handles starting with the base). */
export function firstFreeHandle(base: string, taken: ReadonlySet<string>): string {
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? '' : `-${n}`;
    const candidate = base.slice(0, MAX_HANDLE_LENGTH - suffix.length).replace(/-+$/, '') + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}

const HANDLE = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
// BCP 47 as pages' `lang` takes it: a primary language and optional subtags (en, en-GB, zh-Hant-TW).
const LANGUAGE = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/;

const invalid = (field: string, message: string) => validationError(`${field} ${message}`, [{ path: `/body/${field}`, message }]);

/** An absolute http(s) origin (`https://blog.example.com`), as a site's own address. */
export function normalizeSiteUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw invalid('url', 'must be an absolute URL such as https://blog.example.com');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('url', 'must use http or https');
  if (url.pathname !== '/' || url.search || url.hash || url.username || url.password) {
    throw invalid('url', 'must be an origin only (scheme, host and optional port), without a path');
  }
  return url.origin;
}

function checkHandle(handle: string): string {
  if (handle.length < MIN_HANDLE_LENGTH || handle.length > MAX_HANDLE_LENGTH || !HANDLE.test(handle)) {
    throw invalid('handle', `must be ${MIN_HANDLE_LENGTH}-${MAX_HANDLE_LENGTH} characters of a-z, 0-9 and inner hyphens`);
  }
  if (RESERVED_SLUGS.has(handle)) throw invalid('handle', 'is a reserved word');
  return handle;
}

/** The two `url` values a site on this host may have stored (hosts are compared in lower case). */
export const urlsOfHost = (host: string): [http: string, https: string] => {
  const lower = host.toLowerCase();
  return [`http://${lower}`, `https://${lower}`];
};

export const handleTaken = (handle: string) => conflict(`The handle "${handle}" is taken by another site`);

/** Refuses a patch that changes nothing, before any transaction begins. */
export function checkPatchNotEmpty(patch: SiteSettingsPatch): void {
  if (Object.values(patch).every((value) => value === undefined)) {
    throw validationError('Nothing to change: give at least one of name, description, handle, url, language, postsPerPage, timeZone, newsletter, comments, blockedWords');
  }
}

export interface SettingsOptions {
  /** Hosts no site may claim (the service's own: see domains.ts reservedHosts). */
  reservedHosts?: ReservedHosts;
}

/**
 * The pending domain a proof is about to settle (its host), or null when it is proven already.
 * 409 when the site has no own domain, or when its token changed since the check (`checkedToken`
 * null: an operator's word, whatever the token).
 */
export function domainToProve(site: Site, checkedToken: string | null): { host: string } | null {
  if (!site.url) throw conflict('The site has no own domain: set its url first');
  if (site.domainToken === null) return null;
  if (checkedToken !== null && checkedToken !== site.domainToken) throw conflict('The site\'s domain changed while it was checked: check again');
  return { host: new URL(site.url).host };
}

/**
 * The changes a patch makes to a site, checked field by field in a fixed order (the first
 * problem is the one reported); steps, as they ask who holds a handle or a host.
 */
export function* settingsChanges(current: Site, patch: SiteSettingsPatch, now: Date, options: SettingsOptions = {}): Steps<Partial<Site>> {
  const changes: Partial<Site> = {};
  if (patch.name !== undefined) {
    const name = patch.name.trim();
    if (!name || name.length > MAX_SITE_NAME_LENGTH) throw invalid('name', `must be 1-${MAX_SITE_NAME_LENGTH} characters`);
    if (!hasVisibleCharacter(name)) throw invalid('name', 'must have at least one visible character');
    if (!isWellFormed(name)) throw invalid('name', 'must be well-formed Unicode (no lone surrogates)');
    changes.name = name;
  }
  if (patch.description !== undefined) {
    const description = patch.description?.trim() || null;
    if (description && description.length > MAX_SITE_DESCRIPTION_LENGTH) throw invalid('description', `must be at most ${MAX_SITE_DESCRIPTION_LENGTH} characters`);
    if (description && !isWellFormed(description)) throw invalid('description', 'must be well-formed Unicode (no lone surrogates)');
    changes.description = description;
  }
  if (patch.handle !== undefined && patch.handle !== current.handle) {
    changes.handle = checkHandle(patch.handle);
    if ((yield* ask('sites', 'byHandle', changes.handle)) !== undefined) throw handleTaken(changes.handle);
  }
  if (patch.url !== undefined) {
    changes.url = patch.url === null || patch.url.trim() === '' ? null : normalizeSiteUrl(patch.url);
    if (changes.url === null) changes.domainToken = null;
    else if (changes.url !== current.url) {
      const host = new URL(changes.url).host;
      if (options.reservedHosts?.has(hostnameOf(changes.url))) throw invalid('url', `is refused: ${host} is the service's own address`);
      // Only a proven holder blocks: a pending claim cannot keep the domain's owner out.
      const holder = yield* ask('sites', 'byHost', host);
      if (holder !== undefined && holder.id !== current.id) throw conflict(`Another site already answers on ${host}`);
      // A new host must be proven; the same host under another scheme or port stays as it was.
      const sameHost = current.url !== null && hostnameOf(current.url) === hostnameOf(changes.url);
      changes.domainToken = sameHost ? current.domainToken : newDomainToken();
    }
  }
  if (patch.language !== undefined) {
    if (!LANGUAGE.test(patch.language)) throw invalid('language', 'must be a BCP 47 language tag such as en or en-GB');
    changes.language = patch.language;
  }
  if (patch.postsPerPage !== undefined) {
    if (!Number.isInteger(patch.postsPerPage) || patch.postsPerPage < 1 || patch.postsPerPage > MAX_POSTS_PER_PAGE) {
      throw invalid('postsPerPage', `must be an integer from 1 to ${MAX_POSTS_PER_PAGE}`);
    }
    changes.postsPerPage = patch.postsPerPage;
  }
  if (patch.newsletter !== undefined) Object.assign(changes, newsletterChanges(patch.newsletter));
  if (patch.timeZone !== undefined) {
    const timeZone = canonicalTimeZone(patch.timeZone);
    if (!timeZone) throw invalid('timeZone', 'must be an IANA time zone name such as UTC or Europe/Berlin');
    changes.timeZone = timeZone;
  }
  if (patch.comments !== undefined) {
    if (!COMMENT_MODES.includes(patch.comments)) throw invalid('comments', `must be one of ${COMMENT_MODES.join(', ')}`);
    changes.commentsMode = patch.comments;
  }
  if (patch.blockedWords !== undefined) {
    const words = normaliseBlockedWords(patch.blockedWords);
    if (words.length > MAX_BLOCKED_WORDS) throw invalid('blockedWords', `must hold at most ${MAX_BLOCKED_WORDS} words`);
    if (words.some((word) => word.length > MAX_BLOCKED_WORD_LENGTH || !isWellFormed(word))) throw invalid('blockedWords', `must be words of at most ${MAX_BLOCKED_WORD_LENGTH} characters`);
    changes.blockedWords = words;
  }
  // Every setting shows on the pages (name, language, addresses): cached pages are stale.
  return Object.assign(changes, { contentVersion: current.contentVersion + 1, contentUpdatedAt: now });
}

/** The columns a newsletter settings patch changes. */
function newsletterChanges(patch: NewsletterSettingsPatch): Partial<Site> {
  const changes: Partial<Site> = {};
  const text = (field: string, value: string | null, max: number) => {
    const trimmed = value?.trim() || null;
    if (trimmed && trimmed.length > max) throw invalid(`newsletter/${field}`, `must be at most ${max} characters`);
    if (trimmed && !isWellFormed(trimmed)) throw invalid(`newsletter/${field}`, 'must be well-formed Unicode (no lone surrogates)');
    return trimmed;
  };
  if (patch.enabled !== undefined) changes.newsletterEnabled = patch.enabled;
  if (patch.senderName !== undefined) {
    const name = text('senderName', patch.senderName, MAX_SENDER_NAME_LENGTH);
    // A name goes into a From header: no line breaks, no angle brackets or quotes to confuse it.
    if (name && /[\r\n<>"]/.test(name)) throw invalid('newsletter/senderName', 'must not hold line breaks, angle brackets or quotes');
    changes.newsletterSenderName = name;
  }
  if (patch.replyTo !== undefined) {
    const replyTo = patch.replyTo === null || patch.replyTo.trim() === '' ? null : normalizeEmail(patch.replyTo);
    if (replyTo === null && patch.replyTo !== null && patch.replyTo.trim() !== '') throw invalid('newsletter/replyTo', 'must be an email address');
    changes.newsletterReplyTo = replyTo;
  }
  if (patch.footer !== undefined) changes.newsletterFooter = text('footer', patch.footer, MAX_NEWSLETTER_FOOTER_LENGTH);
  return changes;
}

/** The IANA time zone `name` as Intl spells it (Europe/Berlin for europe/berlin), or null when Intl knows no such zone. */
export function canonicalTimeZone(name: string): string | null {
  if (!/^[A-Za-z0-9_+\-/]{1,64}$/.test(name)) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}
