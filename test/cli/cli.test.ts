// Contract §6, the `assent` command: run for real (node bin/assent.mjs) on this project's store.
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { listMigrations } from '../../src/platform/db/migrate.js';
import { COMMANDS } from '../../src/cli/commands.js';
import { cliJson, createCliStore, freePort, request, ROOT, runCli, uniqueSlug, type CliStore } from './child.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KEY = /^ask_live_[0-9A-Za-z]{32}$/;

// Each test runs several processes, and one of them rebuilds dist/ when src/ has changed meanwhile.
vi.setConfig({ testTimeout: 90_000 });

let store: CliStore;
let env: Record<string, string>;
beforeAll(async () => {
  store = await createCliStore();
  env = store.env;
});
afterAll(async () => store?.drop());

async function newOrg(): Promise<string> {
  const slug = uniqueSlug();
  await cliJson(['org', 'create', slug], env);
  return slug;
}

describe('assent org create', () => {
  test('--json prints exactly {id, slug, name, created_at}; the name defaults to the slug; exit 0', async () => {
    const slug = uniqueSlug();
    const r = await runCli(['org', 'create', slug, '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const org = JSON.parse(r.stdout);
    expect(org).toEqual({ id: expect.stringMatching(UUID), slug, name: slug, created_at: expect.stringMatching(ISO) });
    const stored = await store.query('select id, slug, name from organizations where slug = $1', [slug]);
    expect(stored).toEqual([{ id: org.id, slug, name: slug }]);
  });

  test('--name sets the name', async () => {
    const slug = uniqueSlug();
    const org = await cliJson(['org', 'create', slug, '--name', 'Acme Bank Ltd'], env);
    expect(org).toEqual({ id: expect.stringMatching(UUID), slug, name: 'Acme Bank Ltd', created_at: expect.stringMatching(ISO) });
  });

  test('an existing slug is refused: exit 1, says it exists, the first organization is kept', async () => {
    const slug = uniqueSlug();
    const first = await cliJson(['org', 'create', slug, '--name', 'First'], env);
    const r = await runCli(['org', 'create', slug, '--name', 'Second', '--json'], env);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`slug "${slug}" already exists`));
    expect(await store.query('select id, name from organizations where slug = $1', [slug])).toEqual([{ id: first.id, name: 'First' }]);
  });

  test.each([
    ['ab', /must be 3-63 characters long/],
    ['a'.repeat(64), /must be 3-63 characters long/],
    ['acMe', /may contain only a-z, 0-9 and -/],
    ['Acme', /must start with a lower-case letter/],
    ['1acme', /must start with a lower-case letter/],
    ['acme_bank', /may contain only a-z, 0-9 and -/],
    ['acme-', /must not end with -/],
    ['www', /is reserved/],
    ['api', /is reserved/],
    ['admin', /is reserved/],
  ])('slug %j is refused: exit 1, a message naming the problem, nothing created', async (slug, problem) => {
    const r = await runCli(['org', 'create', slug, '--json'], env);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`Slug "${slug}"`);
    expect(r.stderr).toMatch(problem);
    expect(await store.query('select slug from organizations where lower(slug) = lower($1)', [slug])).toEqual([]);
  });
});

describe('assent key create', () => {
  test('--json prints {id, key, prefix, scopes}: ask_live_ + 32 base62, prefix = first 12 characters, scopes default to admin', async () => {
    const slug = await newOrg();
    const r = await runCli(['key', 'create', slug, '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const key = JSON.parse(r.stdout);
    expect(key).toEqual({ id: expect.stringMatching(UUID), key: expect.stringMatching(KEY), prefix: key.key.slice(0, 12), scopes: ['admin'] });
    expect(key.prefix).toHaveLength(12);
  });

  test('--scopes sets the scopes', async () => {
    const slug = await newOrg();
    const key = await cliJson(['key', 'create', slug, '--scopes', 'grievances,nominees'], env);
    expect(key.scopes).toEqual(['grievances', 'nominees']);
    const [listed] = await cliJson(['key', 'list', slug], env);
    expect(listed.scopes).toEqual(['grievances', 'nominees']);
  });

  test('an unknown scope is refused: exit 1, names it, no key created', async () => {
    const slug = await newOrg();
    const r = await runCli(['key', 'create', slug, '--scopes', 'grievances,superuser', '--json'], env);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/Unknown scope superuser/);
    expect(await cliJson(['key', 'list', slug], env)).toEqual([]);
  });

  test('an unknown organization is refused: exit 1', async () => {
    const r = await runCli(['key', 'create', uniqueSlug(), '--json'], env);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/No organization with slug/);
  });

  test('the plaintext is stored nowhere: only its SHA-256 hex, and key list never shows it', async () => {
    const slug = await newOrg();
    const created = await cliJson(['key', 'create', slug], env);
    const list = await runCli(['key', 'list', slug, '--json'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).not.toContain(created.key);
    expect(list.stdout).not.toContain(created.key.slice(12));

    const rows = await store.query('select * from api_keys where id = $1', [created.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key_hash).toBe(createHash('sha256').update(created.key).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(created.key.slice(12));
  });

  test('without --json the key alone is printed on the first line', async () => {
    const slug = await newOrg();
    const r = await runCli(['key', 'create', slug], env);
    expect(r.code, r.stderr).toBe(0);
    const [first] = r.stdout.split('\n');
    expect(first).toMatch(KEY);
    const [listed] = await cliJson(['key', 'list', slug], env);
    expect(listed.prefix).toBe(first!.slice(0, 12));
  });
});

describe('assent key list', () => {
  test('--json: every key with id, name, prefix, scopes, created_at, last_used_at null, revoked_at null', async () => {
    const slug = await newOrg();
    const a = await cliJson(['key', 'create', slug, '--name', 'backend'], env);
    const b = await cliJson(['key', 'create', slug, '--scopes', 'consent'], env);
    const list = await cliJson(['key', 'list', slug], env);
    expect(list).toEqual([
      { id: a.id, name: 'backend', prefix: a.prefix, scopes: ['admin'], created_at: expect.stringMatching(ISO), last_used_at: null, revoked_at: null },
      { id: b.id, name: 'default', prefix: b.prefix, scopes: ['consent'], created_at: expect.stringMatching(ISO), last_used_at: null, revoked_at: null },
    ]);
  });

  test('an organization without keys: []', async () => {
    expect(await cliJson(['key', 'list', await newOrg()], env)).toEqual([]);
  });

  test('an unknown organization is refused: exit 1', async () => {
    const r = await runCli(['key', 'list', uniqueSlug(), '--json'], env);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/No organization with slug/);
  });
});

describe('assent key revoke', () => {
  test('--json sets revoked_at and key list shows it; the other keys stay active', async () => {
    const slug = await newOrg();
    const kept = await cliJson(['key', 'create', slug], env);
    const gone = await cliJson(['key', 'create', slug], env);
    const r = await runCli(['key', 'revoke', slug, gone.id, '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const revoked = JSON.parse(r.stdout);
    expect(revoked).toEqual({ id: gone.id, revoked_at: expect.stringMatching(ISO) });
    const list = await cliJson<{ id: string; revoked_at: string | null }[]>(['key', 'list', slug], env);
    expect(list.map((k) => [k.id, k.revoked_at])).toEqual([
      [kept.id, null],
      [gone.id, revoked.revoked_at],
    ]);
  });

  test('an unknown key id is refused: exit 1 with a message, nothing revoked', async () => {
    const slug = await newOrg();
    await cliJson(['key', 'create', slug], env);
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const r = await runCli(['key', 'revoke', slug, id, '--json'], env);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`No API key with id "${id}" in organization "${slug}"`);
    }
    expect((await cliJson(['key', 'list', slug], env))[0].revoked_at).toBeNull();
  });

  test("another organization's key id is refused: exit 1, the key stays active", async () => {
    const owner = await newOrg();
    const other = await newOrg();
    const key = await cliJson(['key', 'create', owner], env);
    const r = await runCli(['key', 'revoke', other, key.id], env);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`No API key with id "${key.id}"`);
    expect((await cliJson(['key', 'list', owner], env))[0].revoked_at).toBeNull();
  });

  test('an unknown organization slug is refused: exit 1', async () => {
    const r = await runCli(['key', 'revoke', uniqueSlug(), randomUUID()], env);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/No organization with slug/);
  });
});

describe('assent migrate', () => {
  test('--json: the first run applies every migration, the second none', async () => {
    const fresh = await createCliStore({ empty: true });
    try {
      const versions = listMigrations().map((m) => m.version);
      expect(versions).toContain('0001_foundation');
      expect(await cliJson(['migrate'], fresh.env)).toEqual({ applied: versions, current: versions.at(-1) });
      expect(await cliJson(['migrate'], fresh.env)).toEqual({ applied: [], current: versions.at(-1) });
    } finally {
      await fresh.drop();
    }
  });
});

describe('usage', () => {
  test('no command: usage on stdout, exit 2', async () => {
    const r = await runCli([], env);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toMatch(/^Usage: assent <command>/);
    expect(r.stdout).toContain('org create <slug>');
  });

  test('an unknown command: exit 2 with the usage on stderr', async () => {
    for (const args of [['frobnicate'], ['org', 'delete', 'acme'], ['org', 'create']]) {
      const r = await runCli(args, env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/Usage: assent/);
    }
  });

  test('an unknown option: exit 2, one sentence of ours naming it and what the command takes (issue 30 item 5: not parseArgs\' text with its unclosed quote)', async () => {
    const r = await runCli(['org', 'create', uniqueSlug(), '--colour'], env);
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: 'assent: Unknown option "--colour" for assent org create (it takes --name, --json; assent org create --help says more)\n',
    });
    const serve = await runCli(['serve', '--port', '3000'], env);
    expect(serve).toEqual({ code: 2, stdout: '', stderr: 'assent: Unknown option "--port" for assent serve (it takes no options; assent serve --help says more)\n' });
    const short = await runCli(['key', 'list', 'acme', '-x'], env);
    expect(short).toEqual({ code: 2, stdout: '', stderr: 'assent: Unknown option "-x" for assent key list (it takes --json; assent key list --help says more)\n' });
    // Alone, an unknown option is named before the usage.
    const alone = await runCli(['--colour'], env);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/^assent: Unknown option "--colour"\.\n\nUsage: assent <command>/);
    for (const out of [r, serve, short, alone]) expect(out.stderr.split('\n')[0]).not.toContain("'");
  });
});

describe('help, version and groups (issue 20 item 7)', () => {
  test('--version, -v and `assent version` print the package version; exit 0', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    // -v too, as node -v and npm -v (issue 30 item 5: it printed the usage without a word).
    for (const args of [['--version'], ['version'], ['-v']]) {
      const r = await runCli(args, env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`assent ${version}\n`);
    }
  });

  test('every command answers --help with its own usage and every option it takes; exit 0', async () => {
    expect(COMMANDS.map((c) => c.name)).toEqual(expect.arrayContaining(['audit verify', 'org create', 'key create', 'key list', 'key revoke', 'user create', 'user set-password', 'member add', 'migrate', 'serve']));
    const answers = await Promise.all(COMMANDS.map((c) => runCli([...c.name.split(' '), '--help'], env)));
    COMMANDS.forEach((command, i) => {
      const r = answers[i]!;
      expect(r.code, `${command.name}: ${r.stderr}`).toBe(0);
      expect(r.stdout.startsWith(`Usage: assent ${command.name}${command.args.map((a) => ` <${a}>`).join('')}`), r.stdout).toBe(true);
      expect(r.stdout).not.toContain('Commands:');
      for (const option of [...Object.keys(command.options), 'help']) expect(r.stdout, command.name).toContain(`--${option}`);
    });
    // -h and `assent help <command>` say the same.
    expect((await runCli(['key', 'list', '-h'], env)).stdout).toBe(answers[COMMANDS.findIndex((c) => c.name === 'key list')]!.stdout);
    expect((await runCli(['help', 'key', 'list'], env)).stdout).toBe(answers[COMMANDS.findIndex((c) => c.name === 'key list')]!.stdout);
  });

  test('serve on a port in use says so before anything is created: no data directory, no secret key, exit 1 (issue 30 item 5)', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    const dataDir = join(tmpdir(), `assent-port-${uniqueSlug()}`);
    try {
      for (const host of ['127.0.0.1', '0.0.0.0']) {
        const r = await runCli(['serve'], { DATA_DIR: dataDir, PORT: String(port), HOST: host, ASSENT_SECRET_KEY: '' }, 30_000);
        expect(r).toEqual({
          code: 1,
          stdout: '',
          stderr: `assent: port ${port} is already in use (${host}): stop the other server or set PORT. Nothing was started or created.\n`,
        });
        expect(existsSync(dataDir), host).toBe(false);
      }
      // On PostgreSQL the same, before the database is opened (an unreachable one is never tried).
      const pg = await runCli(['serve'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:9/none', PORT: String(port), HOST: '127.0.0.1' }, 30_000);
      expect([pg.code, pg.stderr]).toEqual([1, `assent: port ${port} is already in use (127.0.0.1): stop the other server or set PORT. Nothing was started or created.\n`]);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('serve --help starts nothing: exit 0 at once, the port stays closed, no data directory is made', async () => {
    const port = await freePort();
    const dataDir = join(tmpdir(), `assent-help-${uniqueSlug()}`);
    const r = await runCli(['serve', '--help'], { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' }, 20_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Usage: assent serve\n/);
    await expect(request(port, { method: 'GET', path: '/health', host: 'localhost' }, 2_000)).rejects.toThrow(/ECONNREFUSED/);
    expect(() => readFileSync(join(dataDir, 'assent.lock'))).toThrow(/ENOENT/);
  });

  test('a group without a command lists its commands (exit 2; with --help exit 0); an unknown one is refused', async () => {
    const org = await runCli(['org'], env);
    expect(org.code).toBe(2);
    expect(org.stdout).toMatch(/^Usage: assent org <command>/);
    expect(org.stdout).toContain('org create <slug>');
    const key = await runCli(['key', '--help'], env);
    expect(key.code).toBe(0);
    for (const sub of ['key create <slug>', 'key list <slug>', 'key revoke <slug> <key-id>']) expect(key.stdout).toContain(sub);
    expect(key.stdout).not.toContain('org create');
    const unknown = await runCli(['key', 'rotate', 'acme'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown command "key rotate acme"');
    expect(unknown.stderr).toContain('key revoke <slug> <key-id>');
  });

  test("a command refuses another command's option and a missing required one: exit 2", async () => {
    const scopes = await runCli(['org', 'create', uniqueSlug(), '--scopes', 'admin'], env);
    expect(scopes.code).toBe(2);
    expect(scopes.stderr).toMatch(/--scopes/);
    const role = await runCli(['member', 'add', uniqueSlug(), 'someone@example.com'], env);
    expect(role.code).toBe(2);
    expect(role.stderr).toContain('member add needs --role owner|admin|member');
  });

  test('key list: one header and aligned columns, whatever the names and scopes', async () => {
    const slug = await newOrg();
    await cliJson(['key', 'create', slug, '--name', 'a', '--scopes', 'consent'], env);
    await cliJson(['key', 'create', slug, '--name', 'a much longer key name', '--scopes', 'grievances,nominees,consent'], env);
    const revoked = await cliJson(['key', 'create', slug, '--name', 'old'], env);
    await cliJson(['key', 'revoke', slug, revoked.id], env);
    const r = await runCli(['key', 'list', slug], env);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    const header = lines[0]!;
    expect(header).toMatch(/^ID +NAME +PREFIX +SCOPES +CREATED +STATUS$/);
    for (const [title, pattern] of [['NAME', /(?<= {2})(a|a much longer key name|old)(?= )/], ['PREFIX', /ask_live_/], ['SCOPES', /(?<= {2})(consent|grievances,nominees,consent|admin)(?= )/], ['CREATED', /\d{4}-\d{2}-\d{2}T/], ['STATUS', /last used|revoked/]] as const) {
      for (const line of lines.slice(1)) expect(line.search(pattern), `${title} in ${line}`).toBe(header.indexOf(title));
    }
    expect(lines[3]).toMatch(/revoked \d{4}-/);
    expect(lines.every((l) => l === l.trimEnd())).toBe(true);
  });
});
