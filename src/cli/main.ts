// The `assent` command: organizations, API keys, migrations and the server. It calls feature services
// directly (never HTTP), on the same DATA_DIR / DATABASE_URL as the server.
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError, type Config } from '../config.js';
import { openStore } from '../platform/db/store.js';
import { DataDirBusyError } from '../platform/db/data-dir-lock.js';
import { StoreUnavailableError } from '../platform/db/connection-errors.js';
import { TenantRoleError } from '../platform/db/tenant-role.js';
import { AppError } from '../platform/http/errors.js';
import { systemClock } from '../platform/clock.js';
import { checkRole, createAccountsService, createUserService, type AccountsService, type UserService } from '../features/accounts/index.js';
import { serve } from '../main.js';
import { verifyAuditChain, type ChainReport } from '../features/audit/index.js';

const USAGE = `Usage: assent <command> [options]

Commands:
  org create <slug> [--name NAME] [--json]        Create an organization (served at <slug>.BASE_DOMAIN)
  key create <slug> [--scopes admin,grievances,nominees,consent] [--name NAME] [--json]
                                                  Create an API key; the plaintext is printed once
  key list <slug> [--json]                        List an organization's keys (never the plaintext)
  key revoke <slug> <key-id> [--json]             Revoke a key at once
  user create <email> --password-stdin [--org SLUG --role owner|admin|member] [--json]
                                                  Create a user (password read from standard input)
  user set-password <email> --password-stdin      Change a password; ends the user's sessions at once
  member add <slug> <email> --role owner|admin|member [--json]
                                                  Add a user to an organization, or change their role
  audit verify <slug> [--json]                    Walk the organization's audit hash chain; exit 1 naming
                                                  the first entry that does not match
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

async function withUsers<T>(config: Config, fn: (users: UserService, accounts: AccountsService) => Promise<T>): Promise<T> {
  const store = await openStore(config, 'cli');
  try {
    return await fn(createUserService({ db: store.db, clock: systemClock }), createAccountsService({ db: store.db, clock: systemClock }));
  } finally {
    await store.close();
  }
}

/** The whole of standard input, less one trailing newline: the password as typed or piped. */
async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError('--password-stdin reads the password from standard input: pipe it in, e.g. printf %s "$PASSWORD" | assent …');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
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
      org: { type: 'string' },
      role: { type: 'string' },
      'password-stdin': { type: 'boolean', default: false },
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
    case 'user create': {
      const [email] = need(rest, 1, 'user create <email> --password-stdin [--org SLUG --role owner|admin|member] [--json]');
      if (!values['password-stdin']) throw new UsageError('user create needs --password-stdin (the password is never taken from the command line)');
      if ((values.org === undefined) !== (values.role === undefined)) throw new UsageError('--org and --role go together');
      const password = await readPassword();
      const user = await withUsers(config(), async (users, accounts) => {
        // Organization and role first: a refused membership must not leave a user behind.
        const membership = values.org ? { org: await accounts.organizationBySlug(values.org), role: checkRole(values.role!) } : null;
        const created = await users.createUser({ email: email!, password });
        if (membership) await users.addMember(membership.org.id, created.id, membership.role);
        return created;
      });
      out.print(
        `Created user ${user.email} (${user.id})${values.org ? `, ${values.role} of ${values.org}` : ''}`,
        { id: user.id, email: user.email, created_at: iso(user.created_at) },
      );
      return 0;
    }
    case 'user set-password': {
      const [email] = need(rest, 1, 'user set-password <email> --password-stdin');
      if (!values['password-stdin']) throw new UsageError('user set-password needs --password-stdin');
      const password = await readPassword();
      const user = await withUsers(config(), (users) => users.setPassword(email!, password));
      out.print(`Password changed for ${user.email}; their sessions have ended`, { id: user.id, email: user.email });
      return 0;
    }
    case 'member add': {
      const [slug, email] = need(rest, 2, 'member add <slug> <email> --role owner|admin|member [--json]');
      if (!values.role) throw new UsageError('member add needs --role owner|admin|member');
      const result = await withUsers(config(), async (users, accounts) => {
        const org = await accounts.organizationBySlug(slug!);
        const user = await users.userByEmail(email!);
        return { user, org, membership: await users.addMember(org.id, user.id, checkRole(values.role!)) };
      });
      out.print(`${result.user.email} is now ${result.membership.role} of ${result.org.slug}`, {
        org: result.org.slug,
        user_id: result.user.id,
        email: result.user.email,
        role: result.membership.role,
      });
      return 0;
    }
    case 'audit verify': {
      const [slug] = need(rest, 1, 'audit verify <slug> [--json]');
      const store = await openStore(config(), 'cli');
      let report: ChainReport;
      try {
        const org = await createAccountsService({ db: store.db, clock: systemClock }).organizationBySlug(slug!);
        report = await verifyAuditChain(store.db, org.id);
      } finally {
        await store.close();
      }
      const b = report.broken;
      out.print(
        b
          ? `Audit chain of ${slug} is BROKEN at entry ${b.seq}${b.id ? ` (${b.id})` : ''}: ${b.reason}. ${report.entries} entries before it verified.`
          : `Audit chain of ${slug} verified: ${report.entries} entries${report.head ? `, head ${report.head.hash}` : ''}`,
        report,
      );
      return b ? 1 : 0;
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
    if (e instanceof AppError || e instanceof ConfigError || e instanceof DataDirBusyError || e instanceof StoreUnavailableError || e instanceof TenantRoleError) {
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
