import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { AppError } from '../errors.js';
import dbPlugin from '../../plugins/db.js';
import sitesPlugin from '../../plugins/sites.js';

const USAGE = `Usage: npm run admin -- <command>

  site create --name "Name"     create a site and print its id and first API key
  site list                     list sites
  site update <siteId> [--name "Name"] [--handle h] [--url https://...] [--description "..."]
              [--language en] [--posts-per-page 10]
                                change a site's settings (--url "" removes its own domain)
  key create --site <siteId>    create another API key for a site (printed once)
  key list --site <siteId>      list a site's keys (prefix only)
  key revoke <keyId>            revoke a key; it stops working at once

Uses the database in DATA_DIR (default ./data), like the server.`;

export class UsageError extends Error {
  override name = 'UsageError';
}

/** Runs one admin command against the database of `config`; writes its output through `out`. */
export async function runAdmin(argv: string[], config: Config, out: (line: string) => void = console.log): Promise<void> {
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

  // The same database and site service as the server, without the rest of the app.
  const app = Fastify({ logger: false });
  await app.register(dbPlugin, { config });
  await app.register(sitesPlugin);
  await app.ready();
  const { sites } = app;
  try {
    const command = `${resource} ${action ?? ''}`.trim();
    switch (command) {
      case 'site create': {
        if (!values.name) throw new UsageError('site create needs --name "Name"');
        const { site, key } = await sites.create(values.name);
        out(`site ${site.id} "${site.name}"`);
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
        });
        out(`site ${site.id} "${site.name}"  handle ${site.handle}  url ${site.url ?? '-'}  language ${site.language}  ${site.postsPerPage} per page`);
        return;
      }
      case 'site list':
        for (const site of await sites.list()) out(`${site.id}  ${site.name}  created ${site.createdAt.toISOString()}`);
        return;
      case 'key create': {
        if (!values.site) throw new UsageError('key create needs --site <siteId>');
        const { key, info } = await sites.createKey(values.site);
        out(`key ${info.id}`);
        out(`${key}  (shown once: store it now)`);
        return;
      }
      case 'key list': {
        if (!values.site) throw new UsageError('key list needs --site <siteId>');
        for (const key of await sites.listKeys(values.site)) {
          const state = key.revokedAt ? `revoked ${key.revokedAt.toISOString()}` : 'active';
          out(`${key.id}  ${key.prefix}…  created ${key.createdAt.toISOString()}  ${state}`);
        }
        return;
      }
      case 'key revoke': {
        if (!target) throw new UsageError('key revoke needs <keyId>');
        out((await sites.revokeKey(target)) ? `revoked ${target}` : `${target} was already revoked`);
        return;
      }
      default:
        throw new UsageError(`Unknown command "${command}".\n\n${USAGE}`);
    }
  } finally {
    await app.close();
  }
}

/* c8 ignore start */
if (import.meta.url === `file://${process.argv[1]}`) {
  runAdmin(process.argv.slice(2), loadConfig()).catch((error: unknown) => {
    if (error instanceof UsageError || error instanceof ConfigError || error instanceof AppError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  });
}
/* c8 ignore stop */
