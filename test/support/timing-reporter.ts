// Where a run's time goes, per test file and project: a vitest reporter (add it beside the default one)
// that writes ASSENT_TIMINGS (default test-results/timings.json) when the run ends, and prints the
// slowest files. For each file: its wall time (first seen to finished, as the main process saw it),
// the time to import it, the time of its tests, and the rest, which is its beforeAll/afterAll hooks
// (store set-up, servers, browsers):
//   npx vitest run --reporter=default --reporter=./test/support/timing-reporter.ts
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

export interface FileTiming {
  project: string;
  file: string;
  state: string;
  tests: number;
  /** Milliseconds from the module's start to its end, as the main process saw them. */
  wallMs: number;
  /** Importing the file (and what it imports) and running its describe callbacks. */
  collectMs: number;
  /** The tests, each with its beforeEach/afterEach hooks. */
  testsMs: number;
  /** The file's beforeAll/afterAll hooks: its tests and hooks together, less its tests. */
  hooksMs: number;
}

export default class TimingReporter implements Reporter {
  private readonly started = new Map<string, number>();
  private readonly timings: FileTiming[] = [];
  private runStarted = Date.now();

  onTestRunStart(): void {
    this.runStarted = Date.now();
  }

  onTestModuleQueued(module: TestModule): void {
    this.started.set(`${module.project.name}\0${module.moduleId}`, Date.now());
  }

  onTestModuleStart(module: TestModule): void {
    this.started.set(`${module.project.name}\0${module.moduleId}`, Date.now());
  }

  onTestModuleEnd(module: TestModule): void {
    const diagnostic = module.diagnostic();
    const tests = [...module.children.allTests()];
    const testsMs = tests.reduce((sum, t) => sum + (t.diagnostic()?.duration ?? 0), 0);
    const start = this.started.get(`${module.project.name}\0${module.moduleId}`) ?? Date.now();
    this.timings.push({
      project: module.project.name,
      file: relative(process.cwd(), module.moduleId),
      state: module.state(),
      tests: tests.length,
      wallMs: Date.now() - start,
      collectMs: Math.round(diagnostic.collectDuration),
      testsMs: Math.round(testsMs),
      hooksMs: Math.max(0, Math.round(diagnostic.duration - testsMs)),
    });
  }

  onTestRunEnd(): void {
    const out = process.env.ASSENT_TIMINGS ?? 'test-results/timings.json';
    mkdirSync(dirname(out), { recursive: true });
    const wallMs = Date.now() - this.runStarted;
    writeFileSync(out, JSON.stringify({ wallMs, files: this.timings }, null, 1) + '\n');
    const slowest = [...this.timings].sort((a, b) => b.wallMs - a.wallMs).slice(0, 10);
    const s = (ms: number) => (ms / 1000).toFixed(1).padStart(6);
    process.stdout.write(`\ntimings (${out}): ${(wallMs / 1000).toFixed(1)} s in all; slowest files (wall, import, tests, beforeAll/afterAll, s):\n`);
    for (const t of slowest) process.stdout.write(`${s(t.wallMs)} ${s(t.collectMs)} ${s(t.testsMs)} ${s(t.hooksMs)}  ${t.project.padEnd(8)} ${t.file}\n`);
  }
}
