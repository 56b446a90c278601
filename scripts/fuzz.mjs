// npm run fuzz -- --minutes N [--seed S] [--project pglite|postgres]: the route fuzzing suite
// (test/fuzz/routes.fuzz.test.ts) for N minutes, round after round over every route.
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
const result = spawnSync('npx', ['vitest', 'run', ...(project ? ['--project', project] : []), 'test/fuzz/routes.fuzz.test.ts'], { stdio: 'inherit', env });
process.exit(result.status ?? 1);
