// npm run fuzz -- --minutes N [--seed S] [--runs R] [--project pglite|postgres] [--concurrent | --all]: the
// route fuzzing suite (test/fuzz/routes.fuzz.test.ts) for N minutes, round after round over every route;
// with --concurrent the concurrent mode instead (test/fuzz/concurrent.fuzz.test.ts: batches of requests
// on one record fired at once, the same record used and deleted, new persons met in parallel: issue 34),
// with --all both. The concurrent mode finds its races on PostgreSQL (set TEST_DATABASE_URL).
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
const value = (name) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const env = { ...process.env, FUZZ_MINUTES: value('minutes') ?? '1' };
if (value('seed')) env.FUZZ_SEED = value('seed');
if (value('runs')) env.FUZZ_RUNS = value('runs');
const project = value('project');
const files = args.includes('--all')
  ? ['test/fuzz/routes.fuzz.test.ts', 'test/fuzz/concurrent.fuzz.test.ts']
  : [args.includes('--concurrent') ? 'test/fuzz/concurrent.fuzz.test.ts' : 'test/fuzz/routes.fuzz.test.ts'];
const result = spawnSync('npx', ['vitest', 'run', ...(project ? ['--project', project] : []), ...files], { stdio: 'inherit', env });
process.exit(result.status ?? 1);
