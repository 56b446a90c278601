// The `assent` command's table: every command's words, arguments, options and help, and what it does
// given the feature services. main.ts parses and prints; the same execute() runs in the CLI's own
// process (the services on its own store) or inside a running server that holds the embedded store
// (the control socket, src/cli/control-socket.ts), so both give the same answers.
import { createWriteStream, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../config.js';
import { checkRole, type AccountsService, type UserService } from '../features/accounts/index.js';
import { verifyAuditChain } from '../features/audit/index.js';
import { migrate, type MigrationResult } from '../platform/db/migrate.js';
import { openDatabase } from '../platform/db/open.js';
import { copyStore, StoreCopyError } from '../platform/db/copy.js';
import { StoreUnavailableError } from '../platform/db/connection-errors.js';
import { restoreBackup, writeBackup } from '../platform/db/backup.js';
import { openStore } from '../platform/db/store.js';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { dataDirHolder } from '../platform/db/data-dir-lock.js';
import { createExportService, verifyExport, MANIFEST, MANIFEST_SIGNATURE } from '../features/export/index.js';
import { systemClock } from '../platform/clock.js';
import type { Database } from '../platform/db/types.js';
import { JwksSourceError, loadJwks, publishedKeysOf, verifyReceiptFile, type ReceiptService } from '../features/receipts/index.js';
import { tenantReads } from '../platform/db/tenant-tx.js';
import type { JSONWebKeySet } from 'jose';
import { CheckpointError, checkpointJwsOf, verifyAuditLog, witness, WITNESS_DEFAULT_DIR, type Sequencer } from '../features/transparency/index.js';
import { generateSecretKey, MissingSecretKeyError, resolveSecretKey, SECRET_KEY_FILE } from '../platform/crypto/secret-key.js';
import { rotateSecret } from '../platform/crypto/secret-rotation.js';

export class UsageError extends Error {}

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** The value's placeholder in help (string options). */
  value?: string;
  help: string;
  /** The command refuses to run without it (exit 2). */
  required?: boolean;
}

/** What a command receives: JSON-safe, so it can travel to a running server. */
export interface CommandInput {
  args: string[];
  options: Record<string, string | boolean | undefined>;
  /** Standard input's password, for commands with --password-stdin. */
  password?: string;
}

export interface CommandOutput {
  /** Printed without --json. */
  human: string;
  /** Printed with --json. */
  data: unknown;
  /** 0 unless the command found a problem it reports (audit verify: a broken chain is 1). */
  exitCode?: number;
}

export interface CommandContext {
  db: Database;
  accounts: AccountsService;
  users: UserService;
  config: Config;
  /** The store's migrations: this process's run (CLI), or what the server found at start. */
  migration: MigrationResult;
  /** Signing keys and receipts; throws (exit 1) on PostgreSQL without ASSENT_SECRET_KEY. */
  receipts(): ReceiptService;
  /** The audit sequencer (seals entries, signs checkpoints): the server's own when it runs the command. */
  sequencer(): Sequencer;
}

export interface Command {
  /** The command's words: 'org create'. */
  name: string;
  /** Positional arguments, in order (shown as <name>). */
  args: string[];
  /** Positional arguments that may be left out, after args (shown as [<name>]). */
  optionalArgs?: string[];
  /** The last of args may be given more than once (shown as <name> [<name>...]). */
  variadic?: boolean;
  summary: string;
  /** The help's body: what it does, what it prints, when it refuses. */
  description: string;
  options: Record<string, OptionSpec>;
  /** Refuses option combinations the parser cannot (throws UsageError). */
  check?(input: CommandInput): void;
  /** Runs the command on the services (not set for serve and stop, which main.ts runs itself). */
  execute?(input: CommandInput, ctx: CommandContext): Promise<CommandOutput>;
  /** Instead of execute: runs in the CLI's process without the store opened for it (restore makes the store). */
  standalone?(input: CommandInput, config: Config): Promise<CommandOutput>;
  /** Runs the command without a store or configuration (export verify: nothing but a file). */
  offline?(input: CommandInput): Promise<CommandOutput>;
}

const JSON_OPTION: OptionSpec = { type: 'boolean', help: 'print the result as JSON on standard output' };
/** The proof a third party brings from outside the store or the archive (issue 32): the organization's keys, a checkpoint kept from before. */
const OUTSIDE_JWKS_OPTION: OptionSpec = { type: 'string', value: 'URL|FILE', help: "the organization's keys from outside: https://<org host>/.well-known/jwks.json, or a saved copy" };
const KEPT_CHECKPOINT_OPTION: OptionSpec = { type: 'string', value: 'FILE', help: 'a checkpoint kept from before (its JSON or its JWS): the audit log must still contain its tree unchanged' };

/** --jwks and --checkpoint read; a problem with either (unreachable keys, a file that is not a checkpoint, no file) as a sentence. */
async function outsideProof(options: CommandInput['options']): Promise<{ jwks?: { keys: JSONWebKeySet['keys']; source: string }; kept?: { jws: string; source: string }; problem?: string }> {
  try {
    const jwks = typeof options.jwks === 'string' ? { keys: (await loadJwks(options.jwks)).keys, source: options.jwks } : undefined;
    const kept = typeof options.checkpoint === 'string' ? { jws: checkpointJwsOf(readFileSync(options.checkpoint, 'utf8')), source: options.checkpoint } : undefined;
    return { jwks, kept };
  } catch (e) {
    if (e instanceof JwksSourceError || e instanceof CheckpointError) return { problem: e.message };
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { problem: `no file at ${String(options.checkpoint)}` };
    throw e;
  }
}
const ROLE_VALUE = 'owner|admin|member';

function iso(d: Date | null): string | null {
  return d ? new Date(d).toISOString() : null;
}

/** Rows as text columns, each as wide as its widest cell, two spaces apart (no trailing spaces). */
export function columns(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => [...(r[i] ?? '')].length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell + ' '.repeat(widths[i]! - [...cell].length))).join('  ').trimEnd()).join('\n');
}

export const COMMANDS: Command[] = [
  {
    name: 'org create',
    args: ['slug'],
    summary: 'Create an organization (served at <slug>.BASE_DOMAIN)',
    description:
      'Creates an organization. Its API and dashboard are served at <slug>.<PUBLIC_URL host>.\n' +
      'A slug is 3-63 characters of a-z, 0-9 and -, starting with a letter, not ending with -, and not\n' +
      'reserved (www, api, admin, ...). Refused (exit 1) when the slug exists.',
    options: {
      name: { type: 'string', value: 'NAME', help: "the organization's display name (default: the slug)" },
      json: { ...JSON_OPTION, help: 'print {id, slug, name, created_at}' },
    },
    async execute({ args: [slug], options }, { accounts, config }) {
      const org = await accounts.createOrganization({ slug: slug!, name: options.name as string | undefined });
      return {
        human:
          `Created organization ${org.slug} (${org.id}), served at ${config.publicUrl.protocol}//${org.slug}.${config.publicUrl.host}\n` +
          `Next: assent key create ${org.slug} --scopes admin`,
        data: { id: org.id, slug: org.slug, name: org.name, created_at: iso(org.created_at) },
      };
    },
  },
  {
    name: 'key create',
    args: ['slug'],
    summary: 'Create an API key; the plaintext is printed once',
    description:
      "Creates an API key for the organization and prints it once, on the first line (keep it: only its\n" +
      'hash is stored). Send it as X-API-Key to the organization\'s host.',
    options: {
      scopes: { type: 'string', value: 'admin,grievances,nominees,consent,sdk', help: 'comma-separated scopes (default: admin)' },
      name: { type: 'string', value: 'NAME', help: 'a name to tell keys apart in key list' },
      json: { ...JSON_OPTION, help: 'print {id, key, prefix, scopes}' },
    },
    async execute({ args: [slug], options }, { accounts }) {
      const scopes = (options.scopes as string | undefined)?.split(',').map((s) => s.trim()).filter(Boolean);
      const key = await accounts.createApiKey(slug!, { scopes, name: options.name as string | undefined });
      return {
        human: `${key.key}\n\nAPI key ${key.id} (${key.prefix}…, scopes: ${key.scopes.join(', ')}). This is the only time the key is shown: store it now.`,
        data: { id: key.id, key: key.key, prefix: key.prefix, scopes: key.scopes },
      };
    },
  },
  {
    name: 'key list',
    args: ['slug'],
    summary: "List an organization's keys (never the plaintext)",
    description: "Lists the organization's API keys, oldest first: id, name, prefix, scopes, and when each was\nlast used or revoked. The key itself is never shown again.",
    options: { json: { ...JSON_OPTION, help: 'print [{id, name, prefix, scopes, created_at, last_used_at, revoked_at}]' } },
    async execute({ args: [slug] }, { accounts }) {
      const keys = await accounts.listApiKeys(slug!);
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
          : columns([
              ['ID', 'NAME', 'PREFIX', 'SCOPES', 'CREATED', 'STATUS'],
              ...rows.map((k) => [
                k.id,
                k.name,
                `${k.prefix}…`,
                k.scopes.join(','),
                k.created_at!,
                k.revoked_at ? `revoked ${k.revoked_at}` : `last used ${k.last_used_at ?? 'never'}`,
              ]),
            ]);
      return { human, data: rows };
    },
  },
  {
    name: 'key revoke',
    args: ['slug', 'key-id'],
    summary: 'Revoke a key at once',
    description: 'Revokes the key (its id from key list): every request with it is refused from now on.',
    options: { json: { ...JSON_OPTION, help: 'print {id, revoked_at}' } },
    async execute({ args: [slug, keyId] }, { accounts }) {
      const key = await accounts.revokeApiKey(slug!, keyId!);
      return { human: `Revoked API key ${key.id} (${key.prefix}…) of ${slug}`, data: { id: key.id, revoked_at: iso(key.revoked_at) } };
    },
  },
  {
    name: 'user create',
    args: ['email'],
    summary: 'Create a user (password read from standard input)',
    description:
      'Creates a user who signs in to the dashboard. The password is the whole of standard input, less one\n' +
      'trailing newline (at least 10 characters); it is never taken from the command line:\n' +
      "  printf %s \"$PASSWORD\" | assent user create privacy@acme.example --password-stdin --org acme --role owner",
    options: {
      'password-stdin': { type: 'boolean', required: true, help: 'read the password from standard input (required)' },
      org: { type: 'string', value: 'SLUG', help: 'also make the user a member of this organization (with --role)' },
      role: { type: 'string', value: ROLE_VALUE, help: 'their role in --org' },
      json: { ...JSON_OPTION, help: 'print {id, email, created_at}' },
    },
    check({ options }) {
      if ((options.org === undefined) !== (options.role === undefined)) throw new UsageError('--org and --role go together');
    },
    async execute({ args: [email], options, password }, { accounts, users }) {
      const org = options.org as string | undefined;
      // Organization and role first: a refused membership must not leave a user behind.
      const membership = org ? { org: await accounts.organizationBySlug(org), role: checkRole(options.role as string) } : null;
      const user = await users.createUser({ email: email!, password: password ?? '' });
      if (membership) await users.addMember(membership.org.id, user.id, membership.role);
      return {
        human: `Created user ${user.email} (${user.id})${org ? `, ${options.role as string} of ${org}` : ''}`,
        data: { id: user.id, email: user.email, created_at: iso(user.created_at) },
      };
    },
  },
  {
    name: 'user set-password',
    args: ['email'],
    summary: "Change a password; ends the user's sessions at once",
    description: "Sets a new password (from standard input, as user create) and ends every session of the user.",
    options: {
      'password-stdin': { type: 'boolean', required: true, help: 'read the password from standard input (required)' },
      json: { ...JSON_OPTION, help: 'print {id, email}' },
    },
    async execute({ args: [email], password }, { users }) {
      const user = await users.setPassword(email!, password ?? '');
      return { human: `Password changed for ${user.email}; their sessions have ended`, data: { id: user.id, email: user.email } };
    },
  },
  {
    name: 'member add',
    args: ['slug', 'email'],
    summary: 'Add a user to an organization, or change their role',
    description: 'Makes an existing user a member of the organization with the role given, or changes the role\nof a member. Owners and admins manage the organization; members read.',
    options: {
      role: { type: 'string', value: ROLE_VALUE, required: true, help: 'the role (required)' },
      json: { ...JSON_OPTION, help: 'print {org, user_id, email, role}' },
    },
    async execute(input, { accounts, users }) {
      const [slug, email] = input.args;
      const role = checkRole(input.options.role as string);
      const org = await accounts.organizationBySlug(slug!);
      const user = await users.userByEmail(email!);
      const membership = await users.addMember(org.id, user.id, role);
      return {
        human: `${user.email} is now ${membership.role} of ${org.slug}`,
        data: { org: org.slug, user_id: user.id, email: user.email, role: membership.role },
      };
    },
  },
  {
    name: 'audit verify',
    args: ['slug'],
    summary: "Check the organization's audit log: hash chain, Merkle tree, signed checkpoints; exit 1 naming the first problem",
    description:
      'Seals what is committed, then recomputes every entry of the audit log from its content: the hash\n' +
      'chain (each entry against the previous one) and the Merkle tree (RFC 9162), whose root must match\n' +
      "every stored checkpoint at its size, each checkpoint's signature verifying with the organization's\n" +
      'keys. --checkpoint FILE: a checkpoint kept from before (from /.well-known/assent/checkpoints/latest,\n' +
      'a witness, or an export) must match the tree at its size; a log shorter than it was cut. --jwks\n' +
      "takes the keys from outside (the organization's /.well-known/jwks.json or a saved copy) instead of\n" +
      'the store. Exit 0 with the counts, the tree root and how many entries still wait to be sealed;\n' +
      'exit 1 naming the first entry or checkpoint that does not match.',
    options: {
      checkpoint: KEPT_CHECKPOINT_OPTION,
      jwks: OUTSIDE_JWKS_OPTION,
      json: { ...JSON_OPTION, help: 'print {ok, problem, chain, tree, checkpoints, kept, unsealed}' },
    },
    check({ options }) {
      if (typeof options.checkpoint === 'string') options.checkpoint = resolvePath(options.checkpoint);
      if (typeof options.jwks === 'string' && !/^https?:\/\//i.test(options.jwks)) options.jwks = resolvePath(options.jwks);
    },
    async execute({ args: [slug], options }, { db, accounts, sequencer }) {
      const org = await accounts.organizationBySlug(slug!);
      const outside = await outsideProof(options);
      if (outside.problem) return { human: `Audit log of ${slug} not verified: ${outside.problem}`, data: { ok: false, problem: outside.problem }, exitCode: 1 };
      const jwks = outside.jwks ?? (await publishedKeysOf(tenantReads(db, org.id)));
      await sequencer().sealNow(org.id);
      const report = await verifyAuditLog(db, org.id, { jwks, kept: outside.kept });
      const waiting = report.unsealed ? `; ${report.unsealed} entries written during the check wait to be sealed` : '';
      return {
        human: report.ok
          ? `Audit log of ${slug} verified: ${report.chain.entries} entries, hash chain head ${report.chain.head?.hash ?? '(none)'}, ` +
            `Merkle root ${report.tree!.root_hash} (size ${report.tree!.size}), ${report.checkpoints} signed checkpoints match` +
            (report.kept ? `; the kept checkpoint of ${report.kept.tree_size} entries (signed ${report.kept.timestamp}) is contained unchanged` : '') +
            waiting
          : `Audit log of ${slug} is BROKEN: ${report.problem}.`,
        data: report,
        exitCode: report.ok ? 0 : 1,
      };
    },
  },
  {
    name: 'store copy',
    args: [],
    summary: 'Copy the embedded store (DATA_DIR) into a new, empty PostgreSQL database',
    description:
      'Copies every table of the embedded store in DATA_DIR, every row as stored (audit entries keep their\n' +
      'hashes), into the PostgreSQL database --to names. The target is migrated first and must be empty;\n' +
      "its user must own the tables (the user that ran the migrations: use a new database). After the copy\n" +
      "each table's rows are counted on both sides and every organization's audit chain is verified on the\n" +
      'target; any difference fails the copy (exit 1) and, before the commit, leaves the target empty.\n' +
      'Stop the server first (the data directory must be free), then serve the copy with the secret that\n' +
      'sealed its signing keys (ASSENT_SECRET_KEY, or when it was unset the key in DATA_DIR/secret.key):\n' +
      '  assent store copy --to postgres://assent:secret@db.internal:5432/assent\n' +
      '  export ASSENT_SECRET_KEY="$(cat data/secret.key)"    # unless ASSENT_SECRET_KEY was already set\n' +
      '  DATABASE_URL=postgres://assent:secret@db.internal:5432/assent npm start',
    options: {
      to: { type: 'string', value: 'postgres://USER:PASSWORD@HOST:5432/DB', required: true, help: 'the target database (required)' },
      json: { ...JSON_OPTION, help: 'print {tables: [{table, rows}], organizations: [{slug, entries, head}], secret_key: {from, file}}' },
    },
    check({ options }) {
      if (!/^postgres(ql)?:\/\//.test(options.to as string)) throw new UsageError('--to takes a PostgreSQL URL: postgres://USER:PASSWORD@HOST:5432/DB');
    },
    async execute({ options }, { db, config, sequencer }) {
      if (config.databaseUrl || db.kind !== 'pglite') {
        throw new UsageError('store copy copies the embedded store in DATA_DIR: unset DATABASE_URL (to move between PostgreSQL servers, use pg_dump and pg_restore; docs/operations.md)');
      }
      // Handed to a running server (the control socket), the copy would miss what is written after it.
      if (!config.databaseUrl && dataDirHolder(config.dataDir)?.holder === 'server') {
        throw new UsageError('store copy needs the data directory to itself: stop the server first (assent stop, or SIGTERM), then copy; writes after a copy would not be in it');
      }
      const to = options.to as string;
      let target;
      try {
        target = await openDatabase({ databaseUrl: to, dataDir: '', rls: config.rls, poolSize: 2, readLanes: 1 });
      } catch (e) {
        if (e instanceof StoreUnavailableError) throw new StoreUnavailableError(e.message.replaceAll('DATABASE_URL', '--to'));
        throw e;
      }
      try {
        await migrate(target, { checkTenantRole: config.rls, advice: { setting: '--to', rerun: 'assent store copy' } });
        const orgs = await db.system.query<{ id: string; slug: string }>('select id, slug from organizations order by slug');
        const before = new Map<string, Awaited<ReturnType<typeof verifyAuditChain>>>();
        // Entries a server left unsealed (stopped between its commit and its next tick) are sealed first, so all are copied in the chain.
        for (const org of orgs) await sequencer().sealNow(org.id);
        for (const org of orgs) before.set(org.id, await verifyAuditChain(db, org.id));
        const tables = await copyStore(db, target, { onTable: (t) => process.stderr.write(`assent: copied ${t.table} (${t.rows} rows)\n`) });
        const organizations = [];
        for (const org of orgs) {
          const source = before.get(org.id)!;
          const copied = await verifyAuditChain(target, org.id);
          if (copied.ok !== source.ok || copied.entries !== source.entries || copied.head?.hash !== source.head?.hash) {
            throw new StoreCopyError(
              `The audit chain of ${org.slug} differs on the target (source: ${source.entries} entries, head ${source.head?.hash ?? 'none'}; target: ${copied.entries} entries, head ${copied.head?.hash ?? 'none'}${copied.broken ? `, broken at ${copied.broken.seq}: ${copied.broken.reason}` : ''}). Drop the target database before trying again.`,
            );
          }
          organizations.push({ slug: org.slug, entries: copied.entries, head: copied.head?.hash ?? null, ok: copied.ok });
        }
        // The secret that sealed the copied keys: ASSENT_SECRET_KEY, or the embedded store's development key file.
        const keyFile = join(config.dataDir, SECRET_KEY_FILE);
        const secretKey: { from: 'ASSENT_SECRET_KEY' | 'file' | 'none'; file: string | null } = config.secretKey
          ? { from: 'ASSENT_SECRET_KEY', file: null }
          : existsSync(keyFile)
            ? { from: 'file', file: resolve(keyFile) }
            : { from: 'none', file: null };
        const broken = organizations.filter((o) => !o.ok).map((o) => o.slug);
        const rows = tables.reduce((n, t) => n + t.rows, 0);
        return {
          human:
            columns([['TABLE', 'ROWS'], ...tables.map((t) => [t.table, String(t.rows)])]) +
            `\n\nCopied ${rows} rows in ${tables.length} tables; counts match on both sides. ` +
            `Audit chains of ${organizations.length} organization${organizations.length === 1 ? '' : 's'} verified on the target, heads as in the source.` +
            (broken.length ? `\nWarning: the audit chains of ${broken.join(', ')} were already broken in the source and were copied as they are (assent audit verify names the entry).` : '') +
            `\nNext: stop using DATA_DIR and start the server with DATABASE_URL set to the target` +
            (secretKey.from === 'ASSENT_SECRET_KEY'
              ? ' and ASSENT_SECRET_KEY as it is now: it seals the signing keys and webhook secrets just copied.'
              : secretKey.from === 'file'
                ? `, and ASSENT_SECRET_KEY set to the key in ${secretKey.file}: it seals the signing keys just copied, ` +
                  `and a server on PostgreSQL does not read DATA_DIR (it refuses to start without ASSENT_SECRET_KEY). Keep it with your other secrets:\n` +
                  `  export ASSENT_SECRET_KEY="$(cat ${secretKey.file})"`
                : ', and ASSENT_SECRET_KEY set (assent secret generate): a server on PostgreSQL refuses to start without it.'),
          data: { tables, organizations, secret_key: secretKey },
        };
      } finally {
        await target.close();
      }
    },
  },
  {
    name: 'backup',
    args: [],
    summary: 'Write a consistent copy of the embedded store to a file, while the server runs or not',
    description:
      'Writes the embedded store (DATA_DIR) to FILE as a gzipped tarball, readable by its owner only. When a\n' +
      'server holds the data directory, it writes the backup itself (the command travels over the control\n' +
      'socket), between two uses of its one database connection: requests wait while it is written\n' +
      '(a stream, a chunk at a time: about 2 minutes for a 1.8 GB data directory on 2 busy cores).\n' +
      'Refused when FILE exists. Restore it with assent restore FILE into an empty DATA_DIR.\n' +
      'For PostgreSQL use pg_dump (docs/operations.md, "Backups").',
    options: {
      out: { type: 'string', value: 'FILE', required: true, help: 'the file to write (must not exist)' },
      json: { ...JSON_OPTION, help: 'print {file, bytes, organizations}' },
    },
    check(input) {
      // The server may run the command in another working directory.
      input.options.out = resolve(input.options.out as string);
    },
    async execute({ options }, { db }) {
      if (db.kind !== 'pglite') throw new UsageError('assent backup copies the embedded store; for PostgreSQL use pg_dump (docs/operations.md, "Backups")');
      const [orgs] = await db.system.query<{ n: string | number }>('select count(*) as n from organizations');
      const written = await writeBackup(db, options.out as string);
      const organizations = Number(orgs!.n);
      return {
        human: `Wrote ${written.file} (${written.bytes} bytes, ${organizations} organization${organizations === 1 ? '' : 's'}). Restore: DATA_DIR=/new/empty/dir assent restore ${written.file}`,
        data: { ...written, organizations },
      };
    },
  },
  {
    name: 'secret generate',
    args: [],
    summary: 'Print a new ASSENT_SECRET_KEY',
    description:
      'Prints a new random key (32 bytes, base64url) for ASSENT_SECRET_KEY, which seals the organizations\'\n' +
      'receipt signing keys (and webhook secrets). Set the same value in every server process and keep it\n' +
      'with your secrets: a store sealed with it cannot sign without it. To change it, give the new one\n' +
      'to assent secret rotate, which seals everything again. Opens no store.',
    options: { json: { ...JSON_OPTION, help: 'print {secret_key}' } },
    async offline() {
      const secret = generateSecretKey();
      return { human: secret, data: { secret_key: secret } };
    },
  },
  {
    name: 'secret rotate',
    args: [],
    summary: 'Seal every signing key and webhook secret again with a new ASSENT_SECRET_KEY',
    description:
      'Opens every organization\'s signing keys (current and retired) and every sealed webhook signing\n' +
      'secret with the current secret (ASSENT_SECRET_KEY; on the embedded store DATA_DIR/secret.key when\n' +
      'it is unset) and seals them with the new one, read from ASSENT_NEW_SECRET_KEY, in one transaction:\n' +
      '  NEW=$(assent secret generate)\n' +
      '  ASSENT_NEW_SECRET_KEY=$NEW assent secret rotate\n' +
      'Refused (exit 1, nothing changed) when the current secret does not open a key, naming it. Values\n' +
      'already sealed with the new secret are left as they are, so running it again is safe. Stop the\n' +
      'servers first (on the embedded store it refuses while one runs), then start them with\n' +
      'ASSENT_SECRET_KEY=$NEW. When the current secret came from DATA_DIR/secret.key, that file then holds\n' +
      'the new one. Receipts already issued stay valid: the signing keys themselves do not change.',
    options: { json: { ...JSON_OPTION, help: 'print {organizations, signing_keys, webhook_secrets, already_new, secret_key_file}' } },
    async standalone(_input, config) {
      if (!config.newSecretKey) {
        throw new UsageError('secret rotate reads the new key from ASSENT_NEW_SECRET_KEY (never from the command line): NEW=$(assent secret generate); ASSENT_NEW_SECRET_KEY=$NEW assent secret rotate');
      }
      if (!config.databaseUrl) {
        // A running server keeps the old secret and would seal what it makes with it.
        if (dataDirHolder(config.dataDir)?.holder === 'server') {
          throw new UsageError('secret rotate needs the data directory to itself: stop the server first (assent stop), rotate, then start it with ASSENT_SECRET_KEY set to the new key');
        }
        if (!config.secretKey && !existsSync(join(config.dataDir, SECRET_KEY_FILE))) {
          throw new UsageError(`secret rotate needs the current secret: ASSENT_SECRET_KEY is not set and ${join(config.dataDir, SECRET_KEY_FILE)} does not exist`);
        }
      }
      const store = await openStore(config, 'cli');
      let staged: string | null = null;
      try {
        const current = resolveSecretKey(config);
        if (!current) throw new MissingSecretKeyError();
        // The file's new content is written before the commit and put in place after it.
        if (current.source === 'data_dir') {
          staged = `${current.path!}.new`;
          writeFileSync(staged, config.newSecretKey + '\n', { mode: 0o600 });
        }
        const report = await rotateSecret(store.db, current.secret, config.newSecretKey);
        if (staged) {
          renameSync(staged, current.path!);
          staged = null;
        }
        const file = current.source === 'data_dir' ? current.path! : null;
        return {
          human:
            `Sealed ${report.signing_keys} signing key${report.signing_keys === 1 ? '' : 's'} and ${report.webhook_secrets} webhook secret${report.webhook_secrets === 1 ? '' : 's'} ` +
            `of ${report.organizations} organization${report.organizations === 1 ? '' : 's'} with the new key` +
            (report.already_new ? ` (${report.already_new} already sealed with it, left as they were)` : '') +
            '.\n' +
            (file
              ? `${file} now holds the new key.`
              : 'Now set ASSENT_SECRET_KEY to the new key (the value of ASSENT_NEW_SECRET_KEY) for every server process and the CLI, and restart the servers: the old key opens nothing any more.'),
          data: { ...report, secret_key_file: file },
        };
      } finally {
        if (staged) rmSync(staged, { force: true });
        await store.close();
      }
    },
  },
  {
    name: 'signing-key list',
    args: ['slug'],
    summary: "List the organization's receipt signing keys (public parts)",
    description:
      'Every Ed25519 key the organization has signed consent receipts with, oldest first: kid, created,\n' +
      'retired, and which one is current. The same keys are public at /.well-known/jwks.json on its host.',
    options: { json: { ...JSON_OPTION, help: 'print [{kid, alg, current, created_at, retired_at, public_jwk}]' } },
    async execute({ args: [slug] }, { accounts, receipts }) {
      const org = await accounts.organizationBySlug(slug!);
      const keys = await receipts().list({ orgId: org.id });
      return {
        human: keys.length
          ? columns([['KID', 'CREATED', 'RETIRED', 'CURRENT'], ...keys.map((k) => [k.kid, iso(k.created_at)!, iso(k.retired_at) ?? '-', k.current ? 'yes' : ''])])
          : `${slug} has no signing key yet (one is made when the server starts or on its first consent)`,
        data: keys.map((k) => ({ ...k, created_at: iso(k.created_at), retired_at: iso(k.retired_at) })),
      };
    },
  },
  {
    name: 'receipts backfill',
    args: [],
    optionalArgs: ['slug'],
    summary: 'Sign late receipts for consent records written before receipts existed',
    description:
      'Signs a receipt for every consent record and withdrawal that has none (records written before\n' +
      'receipts existed, migration 0018), of the organization named or of every organization, with its\n' +
      "current key, 500 records per transaction. A late receipt keeps the record's own time and says\n" +
      'it was issued late (issued_late: true, issued_at: when it was signed). Every server also does this\n' +
      'at start and hourly; run it to finish at once. Waits for an organization another process is\n' +
      'signing; a record is never signed twice. Prints how many were signed. Needs ASSENT_SECRET_KEY\n' +
      '(on the embedded store, DATA_DIR/secret.key serves when it is unset).',
    options: { json: { ...JSON_OPTION, help: 'print {signed, organizations: [{slug, signed}]}' } },
    async execute({ args: [slug] }, { accounts, receipts }) {
      const org = slug === undefined ? undefined : await accounts.organizationBySlug(slug);
      const report = await receipts().backfill({ org: org && { id: org.id, slug: org.slug }, wait: true });
      const per = report.organizations.map((o) => `${o.slug} ${o.signed}`).join(', ');
      return {
        human:
          report.signed === 0
            ? `No record without a receipt${slug ? ` in ${slug}` : ''}: nothing to sign`
            : `Signed ${report.signed} late receipt${report.signed === 1 ? '' : 's'} (${per})`,
        data: { signed: report.signed, organizations: report.organizations.map((o) => ({ slug: o.slug, signed: o.signed })) },
      };
    },
  },
  {
    name: 'export',
    args: ['slug'],
    summary: "Write the organization's archive for the regulator (a .tar.gz)",
    description:
      "Writes every consent record, notice version, consent link, grievance ticket with its history and\n" +
      'messages, nominee, the audit log with its hash chain, the public signing keys, export.json and\n' +
      `${MANIFEST} (the SHA-256 of every other file) into one gzipped tar, read and written a batch at a\n` +
      'time. The file appears under its name only once complete. Prints the SHA-256 of the manifest: keep\n' +
      'it apart from the archive, it pins every file. Check an archive with: assent export verify FILE',
    options: {
      out: { type: 'string', value: 'FILE', required: true, help: 'where to write the archive, e.g. acme-export.tar.gz (required)' },
      json: { ...JSON_OPTION, help: 'print {file, bytes, manifest_sha256, rows}' },
    },
    check({ options }) {
      // Absolute here: a server holding the embedded store runs the command in its own directory.
      options.out = resolvePath(options.out as string);
    },
    async execute({ args: [slug], options }, { db, accounts, receipts, sequencer }) {
      const org = await accounts.organizationBySlug(slug!);
      const out = options.out as string;
      const partial = `${out}.partial`;
      const started = createExportService({ db, clock: systemClock, signer: receipts().signer, sequencer: sequencer() }).exportOrganization({ id: org.id, slug: org.slug, name: org.name });
      try {
        await Promise.all([pipeline(started.stream, createWriteStream(partial)), started.done]);
      } catch (e) {
        rmSync(partial, { force: true });
        throw e;
      }
      renameSync(partial, out);
      const { manifestSha256, rows } = await started.done;
      const bytes = statSync(out).size;
      const counts = Object.entries(rows).map(([table, n]) => `${table} ${n}`).join(', ');
      return {
        human: `Wrote ${out} (${bytes} bytes) for ${org.slug}: ${counts}.\nSHA-256 of ${MANIFEST}: ${manifestSha256}\nCheck it with: assent export verify ${out}`,
        data: { file: out, bytes, manifest_sha256: manifestSha256, rows },
      };
    },
  },
  {
    name: 'restore',
    args: ['file'],
    summary: 'Restore a backup into an empty data directory',
    description:
      'Unpacks a file assent backup wrote into DATA_DIR, which must be missing or empty (a restore never\n' +
      "replaces a store), applies this version's migrations, and verifies every organization's audit chain.\n" +
      'Exit 1 when the directory is not empty, the file is not a backup, or a chain does not verify.\n' +
      'For PostgreSQL use pg_restore (docs/operations.md, "Backups").',
    options: { json: { ...JSON_OPTION, help: 'print {data_dir, bytes, organizations: [{slug, entries, ok}]}' } },
    async standalone({ args: [file] }, config) {
      if (config.databaseUrl) throw new UsageError('assent restore restores the embedded store into DATA_DIR: unset DATABASE_URL (for PostgreSQL use pg_restore; docs/operations.md)');
      const path = resolve(file!);
      if (!existsSync(path)) throw new UsageError(`${path}: no such file`);
      const { bytes } = await restoreBackup(path, config.dataDir);
      const store = await openStore(config, 'cli');
      try {
        const orgs = await store.db.system.query<{ id: string; slug: string }>('select id, slug from organizations order by slug');
        const organizations = [];
        for (const org of orgs) {
          const report = await verifyAuditChain(store.db, org.id);
          organizations.push({ slug: org.slug, entries: report.entries, ok: report.ok });
        }
        const broken = organizations.filter((o) => !o.ok).map((o) => o.slug);
        return {
          human:
            `Restored ${path} into ${config.dataDir}: ${organizations.length} organization${organizations.length === 1 ? '' : 's'}` +
            (store.migration.applied.length ? `, migrated (${store.migration.applied.join(', ')})` : '') +
            (broken.length ? `. The audit chains of ${broken.join(', ')} do NOT verify (assent audit verify names the entry).` : '; every audit chain verifies.'),
          data: { data_dir: config.dataDir, bytes, organizations },
          exitCode: broken.length ? 1 : 0,
        };
      } finally {
        await store.close();
      }
    },
  },
  {
    name: 'signing-key rotate',
    args: ['slug'],
    summary: "Rotate the organization's receipt signing key",
    description:
      'Makes a new Ed25519 key current for the organization\'s consent receipts and retires the old one. Old\n' +
      'keys stay in /.well-known/jwks.json, so receipts they signed still verify. Needs ASSENT_SECRET_KEY\n' +
      '(on the embedded store, DATA_DIR/secret.key serves when it is unset). The API does the same:\n' +
      'POST /api/v1/organization/signing-keys/rotate (audited there).',
    options: { json: { ...JSON_OPTION, help: 'print {kid, retired_kid, created_at}' } },
    async execute({ args: [slug] }, { accounts, receipts }) {
      const org = await accounts.organizationBySlug(slug!);
      const rotated = await receipts().rotate({ orgId: org.id });
      return {
        human: `Rotated the signing key of ${slug}: new kid ${rotated.kid}${rotated.retired_kid ? `; ${rotated.retired_kid} retired (still in the JWKS)` : ''}`,
        data: { kid: rotated.kid, retired_kid: rotated.retired_kid, created_at: iso(rotated.created_at) },
      };
    },
  },
  {
    name: 'export verify',
    args: ['file'],
    summary: 'Check an export offline: the sums, the audit chain and every receipt signature',
    description:
      `Checks an archive written by assent export with nothing but the file (no database, no network):\n` +
      `every file's SHA-256 against ${MANIFEST} and no file added or missing, the manifest's signature\n` +
      `(${MANIFEST_SIGNATURE}, by the organization's key), the audit log's hash chain from its first entry\n` +
      "to the head export.json names, every consent receipt's signature and key validity (and that it says\n" +
      'what its record says), the audit Merkle tree rebuilt from the entries against every signed\n' +
      'checkpoint in the archive, and the row counts. The keys are those of jwks.json in the archive, unless\n' +
      "--jwks gives the organization's published ones (its /.well-known/jwks.json, or a copy kept apart):\n" +
      "then the archive's keys must be among them, unchanged. --checkpoint FILE: a checkpoint kept from\n" +
      "before (a witness's, or /.well-known/assent/checkpoints/latest saved) must be contained unchanged;\n" +
      "--tsa-cert FILE checks every checkpoint's RFC 3161 token. Exit 0 when all hold; exit 1 naming the\n" +
      'first problem found.',
    options: {
      jwks: OUTSIDE_JWKS_OPTION,
      checkpoint: KEPT_CHECKPOINT_OPTION,
      'tsa-cert': { type: 'string', value: 'FILE', help: "the time-stamping authority's certificate (PEM), or its CA's: verify every checkpoint's RFC 3161 token" },
      json: { ...JSON_OPTION, help: 'print {ok, problem, organization, exported_at, files, manifest_sha256, manifest_signed_by, keys_from, audit, tree, kept, timestamps, receipts, rows}' },
    },
    async offline({ args: [file], options }) {
      let tsaCertPem: string | undefined;
      if (typeof options['tsa-cert'] === 'string') {
        try {
          tsaCertPem = readFileSync(options['tsa-cert'], 'utf8');
        } catch (e) {
          throw new UsageError(`cannot read the TSA certificate ${options['tsa-cert']}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
        }
      }
      const outside = await outsideProof(options);
      if (outside.problem) return { human: `Export ${file} not verified: ${outside.problem}`, data: { ok: false, problem: outside.problem }, exitCode: 1 };
      const report = await verifyExport(file!, { jwks: outside.jwks, checkpoint: outside.kept, tsaCertPem });
      const org = report.organization ? `${report.organization.slug} (${report.organization.id})` : file!;
      return {
        human: report.ok
          ? `Export of ${org}, exported ${report.exported_at}, verified:\n` +
            `  ${report.files} files match ${MANIFEST} (its SHA-256: ${report.manifest_sha256})\n` +
            (report.manifest_signed_by
              ? `  ${MANIFEST} signed by the organization's key ${report.manifest_signed_by} (keys from ${report.keys_from})\n`
              : `  ${MANIFEST} is not signed (an archive of format 1)\n`) +
            `  audit chain: ${report.audit!.entries} entries${report.audit!.head ? `, head ${report.audit!.head.hash}` : ''}\n` +
            (report.tree
              ? `  audit tree: root ${report.tree.root_hash} (size ${report.tree.size}), ${report.tree.checkpoints} signed checkpoints match` +
                (report.tree.unsealed ? `; ${report.tree.unsealed} entries written during the export were not sealed yet and are not in it` : '') +
                '\n'
              : '') +
            (report.timestamps
              ? `  TSA tokens: ${report.timestamps.verified} verified with ${String(options['tsa-cert'])}` +
                (report.timestamps.first ? ` (TSA times ${report.timestamps.first} to ${report.timestamps.last})` : '') +
                (report.timestamps.without_token ? `; ${report.timestamps.without_token} checkpoints have none` : '') +
                '\n'
              : '') +
            (report.kept ? `  the checkpoint from ${String(options.checkpoint)} (${report.kept.tree_size} entries, signed ${report.kept.timestamp}) is contained unchanged\n` : '') +
            `  receipts: ${report.receipts!.verified} signatures verified with the key(s) of ${report.keys_from}` +
            (report.receipts!.issued_late ? ` (${report.receipts!.issued_late} issued late, for records written before receipts)` : '') +
            (report.receipts!.without_receipt ? `; ${report.receipts!.without_receipt} records from before receipts have none yet` : '')
          : `Export ${file} FAILED verification: ${report.problem}`,
        data: report,
        exitCode: report.ok ? 0 : 1,
      };
    },
  },
  {
    name: 'receipt verify',
    args: ['file'],
    summary: "Check one consent receipt against the organization's public keys",
    description:
      'Checks a consent receipt (a file holding the compact JWS, or the JSON of GET .../receipt) with the\n' +
      "organization's public keys, fetched from --jwks URL (its /.well-known/jwks.json) or read from a file:\n" +
      "the signature, and that it was signed within its key's validity (not_before, not_after): a receipt\n" +
      'back-dated before its key existed, or signed with a key after its rotation, fails. No database.\n' +
      'Exit 0 and what the receipt says when it verifies; exit 1 naming the problem.',
    options: {
      jwks: { type: 'string', value: 'URL|FILE', required: true, help: "the organization's keys: https://<org host>/.well-known/jwks.json, or a saved copy" },
      json: { ...JSON_OPTION, help: 'print {ok, problem, kid, jwks, receipt}' },
    },
    async offline({ args: [file], options }) {
      const report = await verifyReceiptFile(file!, options.jwks as string);
      const r = report.receipt;
      return {
        human: r
          ? `Receipt verified with key ${report.kid} of ${report.jwks}:\n` +
            `  ${r.action} by ${r.principal.dp_id} at ${r.collection_point.display_id} (${r.collection_point.name}) of ${r.controller.slug}, ${r.time}` +
            (r.issued_late ? ` (issued late, ${r.issued_at})` : '') +
            `\n  notice version ${r.notice.version}; purposes: ${r.purposes.map((p) => `${p.name ?? p.id} ${p.state}`).join(', ')}`
          : `Receipt ${file} FAILED verification: ${report.problem}`,
        data: report,
        exitCode: report.ok ? 0 : 1,
      };
    },
  },
  {
    name: 'witness',
    args: ['url'],
    variadic: true,
    summary: "Keep organizations' signed audit checkpoints and refuse a fork (anyone can run it)",
    description:
      "For each organization's address (e.g. https://acme.privacy.example.com): fetches its public keys\n" +
      '(/.well-known/jwks.json) and its latest signed checkpoint of the audit log, verifies the signature and\n' +
      "that its key was valid at the checkpoint's time (and, with --tsa-cert, its RFC 3161 time-stamp), then\n" +
      'compares it with the checkpoints kept in DIR/<host>/: a larger tree must come with a consistency proof\n' +
      'from the last one kept (fetched and verified), the same size must have the same root. It keeps the new\n' +
      'checkpoint (DIR/<host>/checkpoints/<size>.json, latest.json, jwks.json). Run it regularly (cron). A fork\n' +
      'is refused, exit 1, naming the two checkpoints: the same size with another root, a tree that shrank, a\n' +
      "consistency proof that fails; so is a key that changed under the same id. Exit 0 with one line per\n" +
      'organization otherwise. Needs no credential and no store: only the addresses.',
    options: {
      dir: { type: 'string', value: 'DIR', help: 'where checkpoints are kept, one folder per host (default ./assent-witness)' },
      'tsa-cert': { type: 'string', value: 'FILE', help: "the time-stamping authority's certificate (PEM), or its CA's: verify each checkpoint's TSA token" },
      json: { ...JSON_OPTION, help: 'print [{url, dir, ok, status, organization, checkpoint, previous, proof_length, tsa, kept, problem, summary}]' },
    },
    async offline({ args, options }) {
      let tsaCertPem: string | null = null;
      if (typeof options['tsa-cert'] === 'string') {
        try {
          tsaCertPem = readFileSync(options['tsa-cert'], 'utf8');
        } catch (e) {
          throw new UsageError(`cannot read the TSA certificate ${options['tsa-cert']}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
        }
      }
      const dir = resolvePath(typeof options.dir === 'string' ? options.dir : WITNESS_DEFAULT_DIR);
      const results = await witness(args, { dir, tsaCertPem });
      return { human: results.map((r) => r.summary).join('\n'), data: results, exitCode: results.every((r) => r.ok) ? 0 : 1 };
    },
  },
  {
    name: 'migrate',
    args: [],
    summary: 'Apply pending database migrations',
    description: 'Applies the migrations the store has not had yet (the server also does this when it starts).',
    options: { json: { ...JSON_OPTION, help: 'print {applied, current}' } },
    async execute(_input, { migration: { applied, current } }) {
      return { human: applied.length ? `Applied ${applied.join(', ')}; now at ${current}` : `Up to date (${current})`, data: { applied, current } };
    },
  },
  {
    name: 'serve',
    args: [],
    summary: 'Start the HTTP server (as npm start)',
    description:
      'Starts the server: the API, the dashboard and the consent pages of every organization, on PORT\n' +
      '(3000). It migrates the store first. SIGTERM or SIGINT (Ctrl-C) stops it after in-flight requests.',
    options: {},
  },
  {
    name: 'stop',
    args: [],
    summary: 'Stop the server running on the data directory (embedded store)',
    description:
      'Asks the server that holds DATA_DIR to stop, over its control socket (DATA_DIR/assent.sock; SIGTERM\n' +
      'to the pid in DATA_DIR/assent.lock when the socket does not answer), and waits until it has finished\n' +
      'its in-flight requests and released the directory (at most 20 s). Exit 0 also when no server runs.\n' +
      'With DATABASE_URL, stop the server with SIGTERM or Ctrl-C (npm start passes both on) instead.',
    options: { json: { ...JSON_OPTION, help: 'print {stopped, pid}' } },
  },
];

/** Groups: the first words of commands with two words ('org', 'key', 'user', 'member'). */
export function groupOf(name: string): string | null {
  return name.includes(' ') ? name.split(' ')[0]! : null;
}

/** The arguments as usage shows them: <required> [<optional>]. */
function argWords(command: Command): string[] {
  const last = command.args.at(-1);
  return [...command.args.map((a) => `<${a}>`), ...(command.variadic && last ? [`[<${last}>...]`] : []), ...(command.optionalArgs ?? []).map((a) => `[<${a}>]`)];
}

export function usageLine(command: Command): string {
  const options = Object.entries(command.options).map(([name, spec]) => {
    const text = spec.type === 'string' ? `--${name} ${spec.value}` : `--${name}`;
    return spec.required ? text : `[${text}]`;
  });
  return ['assent', command.name, ...argWords(command), ...options].join(' ');
}

export function commandHelp(command: Command): string {
  const options: [string, string][] = [
    ...Object.entries(command.options).map(([name, spec]): [string, string] => [spec.type === 'string' ? `--${name} ${spec.value}` : `--${name}`, spec.help]),
    ['-h, --help', 'show this help'],
  ];
  return `Usage: ${usageLine(command)}\n\n${command.summary}.\n\n${command.description}\n\nOptions:\n${columns(options.map(([a, b]) => ['  ' + a, b]))}\n`;
}

function commandList(commands: Command[]): string {
  return columns(commands.map((c) => ['  ' + [c.name, ...argWords(c)].join(' '), c.summary]));
}

export function globalHelp(): string {
  return (
    'Usage: assent <command> [options]\n\n' +
    `Commands:\n${commandList(COMMANDS)}\n\n` +
    'assent <command> --help shows a command\'s options; assent --version (or -v) its version.\n' +
    'The store is the server\'s: DATABASE_URL (PostgreSQL) when set, else the embedded store in DATA_DIR (./data).\n'
  );
}

export function groupHelp(group: string): string {
  const commands = COMMANDS.filter((c) => groupOf(c.name) === group);
  return `Usage: assent ${group} <command> [options]\n\nCommands:\n${commandList(commands)}\n\nassent ${group} <command> --help shows a command's options.\n`;
}
