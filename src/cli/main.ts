// The `assent` command: organizations, API keys, migrations and the server. It calls feature services
// directly (never HTTP), on the same DATA_DIR / DATABASE_URL as the server.
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError, type Config } from '../config.js';
import { openStore } from '../platform/db/store.js';
import { DataDirBusyError } from '../platform/db/data-dir-lock.js';
import { AppError } from '../platform/http/errors.js';
import { systemClock } from '../platform/clock.js';
import { createAccountsService, type AccountsService } from '../features/accounts/index.js';
import { serve } from '../main.js';

const USAGE = `Usage: assent <command> [options]

Commands:
  org create <slug> [--name NAME] [--json]        Create an organization (served at <slug>.BASE_DOMAIN)
  key create <slug> [--scopes admin,grievances,nominees,consent] [--name NAME] [--json]
                                                  Create an API key; the plaintext is printed once
  key list <slug> [--json]                        List an organization's keys (never the plaintext)
  key revoke <slug> <key-id> [--json]             Revoke a key at once
  migrate [--json]                                Apply pending database migrations
  serve                                           Start the HTTP server (as npm start)

The store is the server's: DATABASE_URL (PostgreSQL) when set, else the embedded store in DATA_DIR (./data).
`;

class UsageError extends Error {}

type Out = { json: boolean; print(human: string, data: unknown): void };

function output(json: boolean): Out {
  return {
    json,
    print(human, data) {
      process.stdout.write(json ? JSON.stringify(data, null, 2) + '\n' : human + '\n');
    },
  };
}

function iso(d: Date | null): string | null {
  return d ? new Date(d).toISOString() : null;
}

async function withAccounts<T>(config: Config, fn: (accounts: AccountsService) => Promise<T>): Promise<T> {
  const store = await openStore(config, 'cli');
  try {
    return await fn(createAccountsService({ db: store.db, clock: systemClock }));
  } finally {
    await store.close();
  }
}

function need(positionals: string[], count: number, usage: string): string[] {
  if (positionals.length !== count) throw new UsageError(`Usage: assent ${usage}`);
  return positionals;
}

async function run(argv: string[], config: () => Config): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      name: { type: 'string' },
      scopes: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, sub, ...rest] = positionals;
  const out = output(values.json ?? false);
  if (values.help || !command || command === 'help') {
    process.stdout.write(USAGE);
    return command || values.help ? 0 : 2;
  }

  switch (`${command} ${sub ?? ''}`.trim()) {
    case 'org create': {
      const [slug] = need(rest, 1, 'org create <slug> [--name NAME] [--json]');
      const org = await withAccounts(config(), (a) => a.createOrganization({ slug: slug!, name: values.name }));
      const c = config();
      out.print(
        `Created organization ${org.slug} (${org.id}), served at ${c.publicUrl.protocol}//${org.slug}.${c.publicUrl.host}\n` +
          `Next: assent key create ${org.slug} --scopes admin`,
        { id: org.id, slug: org.slug, name: org.name, created_at: iso(org.created_at) },
      );
      return 0;
    }
    case 'key create': {
      const [slug] = need(rest, 1, 'key create <slug> [--scopes admin,grievances,nominees,consent] [--name NAME] [--json]');
      const scopes = values.scopes?.split(',').map((s) => s.trim()).filter(Boolean);
      const key = await withAccounts(config(), (a) => a.createApiKey(slug!, { scopes, name: values.name }));
      out.print(
        `${key.key}\n\nAPI key ${key.id} (${key.prefix}…, scopes: ${key.scopes.join(', ')}). ` +
          'This is the only time the key is shown: store it now.',
        { id: key.id, key: key.key, prefix: key.prefix, scopes: key.scopes },
      );
      return 0;
    }
    case 'key list': {
      const [slug] = need(rest, 1, 'key list <slug> [--json]');
      const keys = await withAccounts(config(), (a) => a.listApiKeys(slug!));
      const rows = keys.map((k) => ({
        id: k.id,
        name: k.name,
        prefix: k.prefix,
        scopes: k.scopes,
        created_at: iso(k.created_at),
        last_used_at: iso(k.last_used_at),
        revoked_at: iso(k.revoked_at),
      }));
      const human =
        rows.length === 0
          ? `No API keys for ${slug}. Create one: assent key create ${slug}`
          : rows
              .map((k) => `${k.id}  ${k.prefix}…  ${k.scopes.join(',').padEnd(20)}  ${k.name}  ${k.revoked_at ? `revoked ${k.revoked_at}` : `last used ${k.last_used_at ?? 'never'}`}`)
              .join('\n');
      out.print(human, rows);
      return 0;
    }
    case 'key revoke': {
      const [slug, keyId] = need(rest, 2, 'key revoke <slug> <key-id> [--json]');
      const key = await withAccounts(config(), (a) => a.revokeApiKey(slug!, keyId!));
      out.print(`Revoked API key ${key.id} (${key.prefix}…) of ${slug}`, { id: key.id, revoked_at: iso(key.revoked_at) });
      return 0;
    }
    case 'migrate': {
      need([sub, ...rest].filter((x): x is string => x !== undefined), 0, 'migrate [--json]');
      const store = await openStore(config(), 'cli');
      await store.close();
      const { applied, current } = store.migration;
      out.print(applied.length ? `Applied ${applied.join(', ')}; now at ${current}` : `Up to date (${current})`, { applied, current });
      return 0;
    }
    case 'serve': {
      await serve(config());
      return 0;
    }
    default:
      throw new UsageError(`Unknown command "${positionals.join(' ')}".\n\n${USAGE}`);
  }
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let cached: Config | undefined;
  const config = () => (cached ??= loadConfig(env));
  try {
    return await run(argv, config);
  } catch (e) {
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`assent: ${(e as Error).message}\n`);
      return 2;
    }
    if (e instanceof AppError || e instanceof ConfigError || e instanceof DataDirBusyError) {
      process.stderr.write(`assent: ${e.message}\n`);
      return 1;
    }
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      process.stderr.write(`assent: port ${(e as { port?: number }).port ?? ''} is already in use: stop the other server or set PORT\n`);
      return 1;
    }
    process.stderr.write(`assent: unexpected error: ${(e as Error).stack ?? e}\n`);
    return 1;
  }
}
