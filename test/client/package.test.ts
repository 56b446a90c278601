// The client package as a consumer gets it: what `npm pack` would publish, and a consumer outside the
// repository that installs it (a symlink, as `npm install ../clients/typescript` makes), imports it with
// plain Node (no TypeScript loader) and typechecks against its declarations. The package's dist/ is built
// by the suites' global set-up (scripts/build.mjs).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { storeKind } from '../support/store.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PKG = join(ROOT, 'clients/typescript');
const require = createRequire(import.meta.url);

// Nothing here depends on the store: once, in the embedded-store run.
describe.runIf(storeKind() === 'pglite')('the @assent/client package', () => {
  const consumer = mkdtempSync(join(tmpdir(), 'assent-client-consumer-'));
  afterAll(() => rmSync(consumer, { recursive: true, force: true }));

  test('publishes its build, its sources, the document and its README; nothing else', () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: PKG, encoding: 'utf8' });
    const [pack] = JSON.parse(out) as { name: string; version: string; files: { path: string }[] }[];
    expect(pack!.name).toBe('@assent/client');
    const files = pack!.files.map((f) => f.path).sort();
    expect(files).toEqual(
      expect.arrayContaining(['README.md', 'dist/index.d.ts', 'dist/index.js', 'dist/idempotent.js', 'dist/webhook-events.js', 'dist/openapi.d.ts', 'openapi.json', 'package.json']),
    );
    expect(files.every((f) => /^(dist\/|src\/|README\.md$|openapi\.json$|package\.json$)/.test(f))).toBe(true);
    // The generated declarations (1 MB) once, in dist/, beside the build that imports them.
    expect(files.filter((f) => f.endsWith('openapi.d.ts'))).toEqual(['dist/openapi.d.ts']);
  });

  test('a consumer imports it with plain Node and typechecks against its declarations', () => {
    mkdirSync(join(consumer, 'node_modules/@assent'), { recursive: true });
    symlinkSync(PKG, join(consumer, 'node_modules/@assent/client'), 'dir');
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }));
    writeFileSync(
      join(consumer, 'use.mjs'),
      `import { createAssentClient, unwrap, AssentError, idempotentPosts, webhookEventTypes } from '@assent/client';
const api = createAssentClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'ask_live_x', retries: 0 });
console.log(JSON.stringify({ get: typeof api.GET, unwrap: typeof unwrap, error: new AssentError(400, 'validation_failed', 'no').code, grievance: idempotentPosts.has('/grievance'), overdue: webhookEventTypes.includes('grievance.overdue') }));
`,
    );
    const printed = execFileSync(process.execPath, ['use.mjs'], { cwd: consumer, encoding: 'utf8' });
    expect(JSON.parse(printed)).toEqual({ get: 'function', unwrap: 'function', error: 'validation_failed', grievance: true, overdue: true });

    // The declarations: a typed call compiles, a wrong body and a wrong code do not.
    writeFileSync(
      join(consumer, 'use.ts'),
      `import { createAssentClient, unwrap, type ErrorCode, type Schema } from '@assent/client';
const api = createAssentClient({ baseUrl: 'http://localhost:3000', apiKey: 'ask_live_x' });
export async function file(): Promise<Schema<'GrievanceTicket'>> {
  return unwrap(api.POST('/grievance', { body: { client_user_id: 'u', subject: 's', description: 'd', category: 'erasure' } }));
}
export const code: ErrorCode = 'validation_failed';
// @ts-expect-error: not a category
export const wrong = () => api.POST('/grievance', { body: { client_user_id: 'u', subject: 's', description: 'd', category: 'nope' } });
// @ts-expect-error: not a code
export const wrongCode: ErrorCode = 'no_such_code';
`,
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, lib: ['ES2022', 'DOM'], types: [] }, files: ['use.ts'] }),
    );
    const tsc = require.resolve('typescript/bin/tsc');
    let output = '';
    try {
      output = execFileSync(process.execPath, [tsc, '-p', join(consumer, 'tsconfig.json')], { cwd: consumer, encoding: 'utf8' });
    } catch (e) {
      output = String((e as { stdout?: string }).stdout ?? e);
    }
    expect(output).toBe('');
  }, 60_000);
});
