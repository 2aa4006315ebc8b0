#!/usr/bin/env node
// First: refuses an unsupported Node before anything native loads.
import '../node-version.js';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { databaseFile } from '../db/sqlite.js';
import { AppError } from '../errors.js';
import dbPlugin from '../../plugins/db.js';
import sitesPlugin from '../../plugins/sites.js';
import { MigrationError, migrateToPostgres, reportLines } from './migrate.js';
import { domainState } from '../sites/domains.js';
import { ROLES, setupUrl, type Role } from '../accounts/rules.js';
import { serviceBaseUrl } from '../../plugins/accounts.js';

const USAGE = `Usage: blog-admin <command> [--json]

  site create --name "Name"     create a site and print its id and first API key
  site list                     list sites
  site update <siteId> [--name "Name"] [--handle h] [--url https://...] [--description "..."]
              [--language en] [--posts-per-page 10] [--time-zone Europe/Berlin]
                                change a site's settings (--url "" removes its own domain; a new
                                domain is pending until proven: see verify-domain)
  site verify-domain <siteId> [--dns]
                                prove the site's own domain on your word (it serves the site
                                from now on); --dns checks its TXT record _blog-verify.<host> instead
  key create --site <siteId>    create another API key for a site (printed once)
  key list --site <siteId>      list a site's keys (prefix only)
  key revoke <keyId>            revoke a key; it stops working at once
  user create --site <siteId> --email <email> [--role owner|editor|author|contributor] [--password-stdin]
                                add a staff user to a site (default role editor); without
                                --password-stdin it prints a one-time setup link (24 hours)
  user list [--site <siteId>]   list staff users (of one site)
  user set-role --site <siteId> --email <email> --role owner|editor|author|contributor
                                change a user's role on a site (a site keeps one owner)
  user remove --email <email> [--site <siteId>]
                                remove a user from a site (its sessions there end), or without
                                --site delete the user altogether
  user reset-password --email <email>
                                print a one-time link to set a new password (24 hours)
  migrate-to-postgres --to postgres://user:password@host:5432/database
                                copy this SQLite site (DATA_DIR's database, server stopped) into
                                an empty PostgreSQL database, with the same ids and keys; with
                                STORAGE_URL set, its knowledge files and images too.
                                Keep the password off the command line (ps shows it): leave out
                                --to and set MIGRATE_TO_URL, or give "--to -" and the URL on
                                standard input

--json prints what a script reads instead of a table.
Uses the database the server uses: DATABASE_URL, or DATA_DIR's (default ./data); only
"site create" may create a SQLite one. In the Docker image: docker exec <container> blog-admin site list`;

export class UsageError extends Error {
  override name = 'UsageError';
}

/** Columns padded to their widest cell, with a header: what a person reads. */
export function table(headers: string[], rows: string[][]): string[] {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ');
  return [line(headers), ...rows.map(line)];
}

/** Where the admin CLI reads what must not be an argument (tests give their own). */
export interface AdminInput {
  env?: NodeJS.ProcessEnv;
  stdin?: NodeJS.ReadableStream;
}

/** The first line of a stream, trimmed. */
async function firstLine(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) {
    text += String(chunk);
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0]!.trim();
}

/**
 * The target of migrate-to-postgres: `--to <url>`, `--to -` (read from standard input), or
 * without --to the MIGRATE_TO_URL variable; with the source named for messages.
 */
async function migrationTarget(to: string | undefined, input: AdminInput): Promise<{ url: string; source: string }> {
  if (to === '-') return { url: await firstLine(input.stdin ?? process.stdin), source: 'the URL on standard input' };
  if (to !== undefined) return { url: to, source: '--to' };
  const env = input.env ?? process.env;
  if (env.MIGRATE_TO_URL) return { url: env.MIGRATE_TO_URL, source: 'MIGRATE_TO_URL' };
  return { url: '', source: '--to' };
}

const iso = (date: Date | null) => (date ? date.toISOString() : '-');

/** Runs one admin command against the database of `config`; writes its output through `out`. */
export async function runAdmin(argv: string[], config: Config, out: (line: string) => void = console.log, input: AdminInput = {}): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        name: { type: 'string' },
        site: { type: 'string' },
        handle: { type: 'string' },
        url: { type: 'string' },
        description: { type: 'string' },
        language: { type: 'string' },
        'posts-per-page': { type: 'string' },
        'time-zone': { type: 'string' },
        to: { type: 'string' },
        json: { type: 'boolean' },
        dns: { type: 'boolean' },
        email: { type: 'string' },
        role: { type: 'string' },
        'password-stdin': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  const [resource, action, target] = positionals;
  if (values.help || !resource) throw new UsageError(USAGE);
  const command = `${resource} ${action ?? ''}`.trim();
  const json = (value: unknown) => out(JSON.stringify(value, null, 2));

  if (command === 'migrate-to-postgres') {
    const target = await migrationTarget(values.to, input);
    const report = await migrateToPostgres(config, { to: target.url, toSource: target.source, progress: values.json ? undefined : out });
    if (values.json) return json(report);
    for (const line of reportLines(report, table)) out(line);
    return;
  }

  // Only a site create may make a SQLite database: anything else on a wrong DATA_DIR says so.
  // (A PostgreSQL database is made by its administrator, and migrated by whoever opens it first.)
  if (config.database.kind === 'sqlite') {
    const file = databaseFile(config.dataDir, config.database.path);
    if (command !== 'site create' && !fs.existsSync(file)) {
      const setting = config.database.path ? 'DATABASE_URL' : 'DATA_DIR';
      throw new UsageError(`No database at ${file}: check ${setting} (the server creates it at its first start; "site create" may too)`);
    }
  }

  // The same database and site service as the server, without the rest of the app.
  const app = Fastify({ logger: false });
  await app.register(dbPlugin, { config });
  await app.register(sitesPlugin);
  await app.ready();
  const { sites } = app;
  const accounts = app.stores.accounts({});
  const link = (token: string) => setupUrl(serviceBaseUrl(config), token);
  const needEmail = () => {
    if (!values.email) throw new UsageError(`${command} needs --email <email>`);
    return values.email;
  };
  const needSite = () => {
    if (!values.site) throw new UsageError(`${command} needs --site <siteId>`);
    return values.site;
  };
  const needRole = (fallback?: Role): Role => {
    const role = values.role ?? fallback;
    if (!(ROLES as readonly string[]).includes(role ?? '')) throw new UsageError(`${command} needs --role ${ROLES.join('|')}`);
    return role as Role;
  };
  try {
    switch (command) {
      case 'user create': {
        const siteId = needSite();
        const email = needEmail();
        const role = needRole('editor');
        const password = values['password-stdin'] ? await firstLine(input.stdin ?? process.stdin) : undefined;
        const { user, setupToken } = await accounts.addMember(siteId, email, role, password);
        const setupLink = setupToken ? link(setupToken) : null;
        if (values.json) return json({ user, setupUrl: setupLink });
        out(`user ${user.id}  ${user.email}  ${role}`);
        if (setupLink) out(`setup link (once, 24 hours): ${setupLink}`);
        return;
      }
      case 'user list': {
        const all = await accounts.listUsers();
        const listed = all
          .map(({ user, sites: memberOf }) => ({ user, sites: values.site ? memberOf.filter((site) => site.id === values.site) : memberOf }))
          .filter((entry) => !values.site || entry.sites.length > 0);
        if (values.json) {
          return json(listed.map(({ user, sites: memberOf }) => ({ id: user.id, email: user.email, active: user.passwordHash !== null, createdAt: user.createdAt, sites: memberOf })));
        }
        if (listed.length === 0) return out('No users: blog-admin user create --site <siteId> --email <email>');
        const rows = listed.map(({ user, sites: memberOf }) => [
          user.id,
          user.email,
          user.passwordHash !== null ? 'active' : 'setup pending',
          memberOf.map((site) => `${site.handle}:${site.role}`).join(', ') || '-',
        ]);
        for (const line of table(['ID', 'EMAIL', 'STATE', 'SITES'], rows)) out(line);
        return;
      }
      case 'user set-role': {
        const siteId = needSite();
        const user = await accounts.userByEmail(needEmail());
        const changed = await accounts.setRole(siteId, user.id, needRole());
        if (values.json) return json(changed);
        out(`${changed.email} is now ${changed.role}`);
        return;
      }
      case 'user remove': {
        const user = await accounts.userByEmail(needEmail());
        if (values.site) await accounts.removeMember(values.site, user.id);
        else await accounts.deleteUser(user.id);
        if (values.json) return json({ removed: user.id, site: values.site ?? null });
        out(values.site ? `removed ${user.email} from ${values.site}` : `deleted ${user.email}`);
        return;
      }
      case 'user reset-password': {
        const token = await accounts.resetLinkByEmail(needEmail());
        if (values.json) return json({ setupUrl: link(token) });
        out(`link (once, 24 hours): ${link(token)}`);
        return;
      }
      case 'site create': {
        if (!values.name) throw new UsageError('site create needs --name "Name"');
        const { site, key } = await sites.create(values.name);
        if (values.json) return json({ site, key });
        out(`site ${site.id} "${site.name}" (handle ${site.handle})`);
        out(`key  ${key}  (shown once: store it now)`);
        return;
      }
      case 'site update': {
        if (!target) throw new UsageError('site update needs <siteId>');
        const perPage = values['posts-per-page'];
        const site = await sites.update(target, {
          name: values.name,
          handle: values.handle,
          url: values.url === undefined ? undefined : values.url || null,
          description: values.description,
          language: values.language,
          postsPerPage: perPage === undefined ? undefined : Number(perPage),
          timeZone: values['time-zone'],
        });
        if (values.json) return json(site);
        for (const line of table(['ID', 'NAME', 'HANDLE', 'URL', 'LANGUAGE', 'PER PAGE'], [[site.id, site.name, site.handle, site.url ?? '-', site.language, String(site.postsPerPage)]])) out(line);
        const domain = domainState(site);
        if (domain?.verification) {
          out(`${domain.host} is pending: it serves the site once the TXT record ${domain.verification.name} holds "${domain.verification.value}"`);
          out(`(then POST /api/v1/site/domain/verify, or blog-admin site verify-domain ${site.id} --dns; without --dns on your word)`);
        }
        return;
      }
      case 'site verify-domain': {
        if (!target) throw new UsageError('site verify-domain needs <siteId>');
        const site = await sites.verifyDomain(target, { dns: values.dns === true });
        if (values.json) return json({ site, domain: domainState(site) });
        out(`${new URL(site.url!).host} is proven: it serves site ${site.id} (handle ${site.handle})`);
        return;
      }
      case 'site list': {
        const list = await sites.list();
        if (values.json) return json(list);
        if (list.length === 0) return out('No sites yet: blog-admin site create --name "Name"');
        for (const line of table(['ID', 'NAME', 'HANDLE', 'URL', 'CREATED'], list.map((s) => [s.id, s.name, s.handle, s.url ?? '-', iso(s.createdAt)]))) out(line);
        return;
      }
      case 'key create': {
        if (!values.site) throw new UsageError('key create needs --site <siteId>');
        const { key, info } = await sites.createKey(values.site);
        if (values.json) return json({ ...info, key });
        out(`key ${info.id}`);
        out(`${key}  (shown once: store it now)`);
        return;
      }
      case 'key list': {
        if (!values.site) throw new UsageError('key list needs --site <siteId>');
        const keys = await sites.listKeys(values.site);
        if (values.json) return json(keys);
        if (keys.length === 0) return out('No keys: blog-admin key create --site <siteId>');
        const rows = keys.map((key) => [key.id, `${key.prefix}…`, iso(key.createdAt), key.revokedAt ? `revoked ${iso(key.revokedAt)}` : 'active']);
        for (const line of table(['ID', 'PREFIX', 'CREATED', 'STATE'], rows)) out(line);
        return;
      }
      case 'key revoke': {
        if (!target) throw new UsageError('key revoke needs <keyId>');
        const revoked = await sites.revokeKey(target);
        if (values.json) return json({ id: target, revoked });
        out(revoked ? `revoked ${target}` : `${target} was already revoked`);
        return;
      }
      default:
        throw new UsageError(`Unknown command "${command}".\n\n${USAGE}`);
    }
  } finally {
    await app.close();
  }
}

/** True when this file is the program being run (also through the `blog-admin` bin link). */
function isMain(): boolean {
  try {
    return fs.realpathSync(process.argv[1] ?? '') === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

/** A mistake a person can fix (told in one line, exit code 2), not a bug (whose stack helps). */
export function isUsageMistake(error: unknown): error is Error {
  return error instanceof UsageError || error instanceof ConfigError || error instanceof AppError || error instanceof MigrationError;
}

/* c8 ignore start */
if (isMain()) {
  try {
    await runAdmin(process.argv.slice(2), loadConfig());
  } catch (error) {
    if (isUsageMistake(error)) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
}
/* c8 ignore stop */
