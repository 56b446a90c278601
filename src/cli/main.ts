// The `assent` command: organizations, API keys, migrations and the server. It calls feature services
// directly (never HTTP), on the same DATA_DIR / DATABASE_URL as the server. The commands, their options
// and their help are a table (commands.ts); this file finds the command, parses, and prints. When a
// server holds the embedded store's data directory, the command runs inside that server instead,
// handed over its control socket (control-socket.ts): same services, same output.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError, type Config } from '../config.js';
import { openStore } from '../platform/db/store.js';
import { DataDirBusyError, dataDirHolder } from '../platform/db/data-dir-lock.js';
import { ControlRefusedError, sendControl } from './control-socket.js';
import { StoreUnavailableError } from '../platform/db/connection-errors.js';
import { TenantRoleError } from '../platform/db/tenant-role.js';
import { StoreCopyError } from '../platform/db/copy.js';
import { BackupError } from '../platform/db/backup.js';
import { SecretRotationError } from '../platform/crypto/secret-rotation.js';
import { PortInUseError } from '../platform/http/port-check.js';
import { AppError } from '../platform/http/errors.js';
import { systemClock } from '../platform/clock.js';
import { createAccountsService, createUserService } from '../features/accounts/index.js';
import { serve } from '../main.js';
import { MissingSecretKeyError, resolveSecretKey } from '../platform/crypto/secret-key.js';
import { createSigningKeyring } from '../platform/crypto/signing-keys.js';
import { createReceiptService, type ReceiptService } from '../features/receipts/index.js';
import { checkpointHooks, createSequencer, type Sequencer } from '../features/transparency/index.js';
import { COMMANDS, UsageError, commandHelp, globalHelp, groupHelp, groupOf, usageLine, type Command, type CommandInput, type CommandOutput, type OptionSpec } from './commands.js';

type Values = Record<string, string | boolean | undefined>;

/** Every option any command takes, so the command's words can be found wherever options stand. */
const ALL_OPTIONS = Object.fromEntries(
  [...COMMANDS.flatMap((c) => Object.entries(c.options)), ['help', { type: 'boolean' }], ['version', { type: 'boolean' }]].map(([name, spec]) => [
    name,
    { type: (spec as OptionSpec).type },
  ]),
) as Record<string, { type: 'string' | 'boolean' }>;

export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** The command the words name, a group's name when they stop at one, or null. */
function find(words: string[]): { command: Command; rest: string[] } | { group: string; unknown: string | null } | null {
  const [first, second] = words;
  const two = COMMANDS.find((c) => c.name === `${first} ${second}`);
  if (two) return { command: two, rest: words.slice(2) };
  const one = COMMANDS.find((c) => c.name === first);
  if (one) return { command: one, rest: words.slice(1) };
  if (COMMANDS.some((c) => groupOf(c.name) === first)) return { group: first!, unknown: second ?? null };
  return null;
}

/** The whole of standard input, less one trailing newline: the password as typed or piped. */
async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError('--password-stdin reads the password from standard input: pipe it in, e.g. printf %s "$PASSWORD" | assent …');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** Runs the command in this process, on its own store. */
async function executeHere(command: Command, input: CommandInput, config: Config): Promise<CommandOutput> {
  const store = await openStore(config, 'cli');
  let sequencer: Sequencer | undefined;
  try {
    // The secret that seals signing keys: ASSENT_SECRET_KEY, or the embedded store's DATA_DIR/secret.key.
    // Without one (PostgreSQL, unset) a new organization gets its key when the server next starts.
    const secret = resolveSecretKey(config);
    const keyring = secret ? createSigningKeyring(secret.secret) : undefined;
    let receipts: ReceiptService | undefined;
    const receiptsOf = () => {
      if (!keyring) throw new MissingSecretKeyError();
      return (receipts ??= createReceiptService({ db: store.db, clock: systemClock, keyring, publicUrl: config.publicUrl }));
    };
    const ctx = {
      receipts: receiptsOf,
      sequencer: () => (sequencer ??= createSequencer({ db: store.db, clock: systemClock, signer: keyring ? receiptsOf().signer : undefined, log: console, ...checkpointHooks(config, systemClock) })),
      db: store.db,
      accounts: createAccountsService({ db: store.db, clock: systemClock, keyring }),
      users: createUserService({ db: store.db, clock: systemClock }),
      config,
      migration: store.migration,
    };
    return await command.execute!(input, ctx);
  } finally {
    await sequencer?.stop();
    await store.close();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long a command waits for a server that holds the data directory to open its control socket. */
const STARTING_SERVER_WAIT_MS = 30_000;

/**
 * Runs the command here; when a server holds the embedded store's data directory, in that server,
 * through its control socket. A server that does not answer there leaves the refusal as it was.
 */
async function execute(command: Command, input: CommandInput, config: Config): Promise<CommandOutput> {
  try {
    return await executeHere(command, input, config);
  } catch (e) {
    if (!(e instanceof DataDirBusyError) || e.holder !== 'server' || config.databaseUrl) throw e;
    // A server that is still starting (migrating) holds the directory before its socket listens.
    const deadline = Date.now() + STARTING_SERVER_WAIT_MS;
    let answer = await sendControl(config.dataDir, { command: command.name, input });
    while (!answer && Date.now() < deadline && dataDirHolder(config.dataDir)?.holder === 'server') {
      await sleep(200);
      answer = await sendControl(config.dataDir, { command: command.name, input });
    }
    if (!answer) throw e;
    if (answer.ok) return answer.output;
    if (answer.kind === 'usage') throw new UsageError(answer.message);
    throw new ControlRefusedError(answer.message);
  }
}


/** `assent stop`: asks the server holding DATA_DIR to stop (SIGTERM when its socket does not answer), and waits until it has released the directory. */
async function stopServer(config: Config, timeoutMs = 20_000): Promise<CommandOutput> {
  if (config.databaseUrl) {
    throw new UsageError(
      'assent stop stops a server on the embedded store (DATA_DIR). With DATABASE_URL set, stop the server with SIGTERM or Ctrl-C (npm start passes both on), or through its process manager.',
    );
  }
  const held = dataDirHolder(config.dataDir);
  if (!held) return { human: `No Assent server is running on ${config.dataDir}: nothing to stop`, data: { stopped: false, pid: null } };
  if (held.holder !== 'server') throw new ControlRefusedError(`The data directory ${config.dataDir} is held by an assent command (pid ${held.pid}), not a server: let it finish`);
  // A server still starting opens its socket once it listens; SIGTERM is the fallback after that.
  const asked = Date.now() + STARTING_SERVER_WAIT_MS;
  let answer = await sendControl(config.dataDir, { command: 'stop' }, 10_000).catch(() => null);
  while (!answer && Date.now() < asked && dataDirHolder(config.dataDir)?.pid === held.pid) {
    await sleep(200);
    answer = await sendControl(config.dataDir, { command: 'stop' }, 10_000).catch(() => null);
  }
  if (!answer?.ok && dataDirHolder(config.dataDir)?.pid === held.pid) process.kill(held.pid, 'SIGTERM');
  const deadline = Date.now() + timeoutMs;
  while (dataDirHolder(config.dataDir)?.pid === held.pid) {
    if (Date.now() > deadline) throw new ControlRefusedError(`The Assent server (pid ${held.pid}) is still running ${timeoutMs / 1000} s after it was asked to stop`);
    await sleep(100);
  }
  return { human: `Stopped the Assent server (pid ${held.pid}); ${config.dataDir} is free`, data: { stopped: true, pid: held.pid } };
}

async function run(argv: string[], config: () => Config): Promise<number> {
  const loose = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: false,
    tokens: true,
    options: { ...ALL_OPTIONS, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' } },
  });
  const words = loose.positionals;
  if (words.length === 0) {
    // `assent --version` and `assent -v` (as node -v, npm -v); any other option alone is named, not ignored.
    const unknown = loose.tokens.find((t) => t.kind === 'option' && t.name !== 'help' && t.name !== 'version');
    if (unknown?.kind === 'option') throw new UsageError(`Unknown option "${unknown.rawName}".\n\n${globalHelp()}`);
    if (loose.values.version) {
      process.stdout.write(`assent ${version()}\n`);
      return 0;
    }
    process.stdout.write(globalHelp());
    return loose.values.help ? 0 : 2;
  }
  if (words[0] === 'help' || words[0] === 'version') {
    if (words[0] === 'version') process.stdout.write(`assent ${version()}\n`);
    else {
      const found = find(words.slice(1));
      if (words.length > 1 && (!found || ('group' in found && found.unknown))) throw new UsageError(`Unknown command "${words.slice(1).join(' ')}".\n\n${globalHelp()}`);
      process.stdout.write(!found ? globalHelp() : 'group' in found ? groupHelp(found.group) : commandHelp(found.command));
    }
    return 0;
  }

  const found = find(words);
  if (!found) throw new UsageError(`Unknown command "${words.join(' ')}".\n\n${globalHelp()}`);
  if ('group' in found) {
    if (found.unknown) throw new UsageError(`Unknown command "${words.join(' ')}".\n\n${groupHelp(found.group)}`);
    // `assent org`: the group's commands, as usage (exit 2) or asked for (--help, exit 0).
    process.stdout.write(groupHelp(found.group));
    return loose.values.help ? 0 : 2;
  }
  const { command } = found;
  if (loose.values.help) {
    process.stdout.write(commandHelp(command));
    return 0;
  }

  const commandOptions = { ...Object.fromEntries(Object.entries(command.options).map(([name, spec]) => [name, { type: spec.type }])), help: { type: 'boolean' as const, short: 'h' } };
  // An option the command does not take is named in a sentence of ours (parseArgs' own says more than it
  // should and prints an unbalanced quote).
  const { tokens } = parseArgs({ args: argv, allowPositionals: true, strict: false, tokens: true, options: commandOptions });
  const unknown = tokens.find((t) => t.kind === 'option' && !(t.name in commandOptions));
  if (unknown?.kind === 'option') {
    const takes = Object.keys(command.options).map((o) => `--${o}`);
    throw new UsageError(
      `Unknown option "${unknown.rawName}" for assent ${command.name}` +
        (takes.length ? ` (it takes ${takes.join(', ')}; assent ${command.name} --help says more)` : ` (it takes no options; assent ${command.name} --help says more)`),
    );
  }
  const strict = parseArgs({ args: argv, allowPositionals: true, options: commandOptions });
  const args = strict.positionals.slice(command.name.split(' ').length);
  if (args.length < command.args.length || (!command.variadic && args.length > command.args.length + (command.optionalArgs?.length ?? 0))) throw new UsageError(`Usage: ${usageLine(command)}\n(assent ${command.name} --help says more)`);
  const options = strict.values as Values;
  for (const [name, spec] of Object.entries(command.options)) {
    if (spec.required && (options[name] === undefined || options[name] === false)) {
      throw new UsageError(`${command.name} needs --${name}${spec.value ? ` ${spec.value}` : ''}${name === 'password-stdin' ? ' (the password is never taken from the command line)' : ''}`);
    }
  }
  const input: CommandInput = { args, options };
  command.check?.(input);

  if (command.name === 'serve') {
    await serve(config());
    return 0;
  }
  if (command.offline) {
    const result = await command.offline(input);
    process.stdout.write(options.json ? JSON.stringify(result.data, null, 2) + '\n' : result.human + '\n');
    return result.exitCode ?? 0;
  }
  if (options['password-stdin']) input.password = await readPassword();
  const result =
    command.name === 'stop' ? await stopServer(config()) : command.standalone ? await command.standalone(input, config()) : await execute(command, input, config());
  process.stdout.write(options.json ? JSON.stringify(result.data, null, 2) + '\n' : result.human + '\n');
  return result.exitCode ?? 0;
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
    if (
      e instanceof AppError ||
      e instanceof ControlRefusedError ||
      e instanceof ConfigError ||
      e instanceof DataDirBusyError ||
      e instanceof StoreUnavailableError ||
      e instanceof TenantRoleError ||
      e instanceof StoreCopyError ||
      e instanceof BackupError ||
      e instanceof SecretRotationError ||
      e instanceof PortInUseError
    ) {
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
