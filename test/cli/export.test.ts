// `assent export <slug> --out FILE` and `assent export verify FILE` (contract §10), run for real: the
// archive is written and verifies; verification needs no store at all (no DATA_DIR, no DATABASE_URL);
// a tampered copy exits 1 naming the problem.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { createGrievanceService } from '../../src/features/grievances/index.js';
import { systemClock } from '../../src/platform/clock.js';
import type { TenantContext } from '../../src/platform/auth/access.js';
import { openDatabase } from '../../src/platform/db/open.js';
import { cliJson, createCliStore, runCli, uniqueSlug, type CliStore } from './child.js';
import { rewriteArchive } from '../support/archive.js';

vi.setConfig({ testTimeout: 120_000 });

let store: CliStore;
let dir: string;
beforeAll(async () => {
  store = await createCliStore();
  dir = mkdtempSync(join(tmpdir(), 'assent-cli-export-'));
});
afterAll(async () => {
  await store?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('export writes an archive that export verify passes with no store; a changed file: exit 1 naming it', async () => {
  const slug = uniqueSlug();
  const org = await cliJson<{ id: string; name: string }>(['org', 'create', slug], store.env);
  const db = await openDatabase({ databaseUrl: store.env.DATABASE_URL ?? null, dataDir: store.dataDir ?? '', poolSize: 1 });
  try {
    const grievances = createGrievanceService({ db, clock: systemClock, publicUrl: new URL('http://localhost:3000') });
    const ctx = { orgId: org.id, slug, orgName: org.name, actor: { type: 'api_key', id: '0190a0a0-0000-7000-8000-000000000001', scopes: ['admin'] }, requestId: 'r1' } as TenantContext;
    for (let i = 0; i < 3; i++) {
      const ticket = await grievances.create(ctx, { client_user_id: `u${i}`, subject: `subject ${i}`, description: 'd', category: 'other' });
      await grievances.changeStatus(ctx, ticket.ticket_id, { status: 'in_progress' });
    }
  } finally {
    await db.close();
  }

  const out = join(dir, 'acme.tar.gz');
  const written = await runCli(['export', slug, '--out', out], store.env);
  expect(written.code, written.stderr).toBe(0);
  expect(written.stdout).toMatch(/grievances 3, grievance-history 6/);
  const manifestSha = /SHA-256 of MANIFEST\.sha256: ([0-9a-f]{64})/.exec(written.stdout)?.[1];
  expect(manifestSha).toBeDefined();
  expect(existsSync(`${out}.partial`)).toBe(false);

  // Nothing but the file: no DATA_DIR, no DATABASE_URL.
  const verified = await runCli(['export', 'verify', out, '--json'], {});
  expect(verified.code, verified.stderr).toBe(0);
  const report = JSON.parse(verified.stdout);
  expect(report).toMatchObject({ ok: true, problem: null, organization: { id: org.id, slug }, manifest_sha256: manifestSha, rows: { grievances: 3, 'grievance-history': 6 } });
  expect(report.audit.entries).toBeGreaterThanOrEqual(6);
  const human = await runCli(['export', 'verify', out], {});
  expect(human.code).toBe(0);
  expect(human.stdout).toContain(`Export of ${slug} (${org.id})`);
  expect(human.stdout).toContain(`audit chain: ${report.audit.entries} entries, head ${report.audit.head.hash}`);

  const bad = join(dir, 'bad.tar.gz');
  await rewriteArchive(out, bad, (f) => (f.name === 'grievances/000001.jsonl' ? Buffer.from(f.content.toString().replace('subject 1', 'subject 9')) : f.content));
  const failed = await runCli(['export', 'verify', bad], {});
  expect(failed.code).toBe(1);
  expect(failed.stdout).toMatch(/FAILED verification: grievances\/000001\.jsonl: its SHA-256 is [0-9a-f]{64}, MANIFEST\.sha256 says [0-9a-f]{64}: the file was changed/);

  // A truncated file is not a readable archive: exit 1, said in words.
  const cut = join(dir, 'cut.tar.gz');
  writeFileSync(cut, readFileSync(out).subarray(0, 200));
  const truncated = await runCli(['export', 'verify', cut], {});
  expect(truncated.code).toBe(1);
  expect(truncated.stdout).toContain('FAILED verification');
  copyFileSync(out, join(dir, 'kept.tar.gz'));
});

test('--help; --out is required; an unknown organization: exit 1', async () => {
  const help = await runCli(['export', '--help'], {});
  expect(help.code).toBe(0);
  expect(help.stdout).toContain('Usage: assent export <slug> --out FILE');
  const verifyHelp = await runCli(['export', 'verify', '--help'], {});
  expect(verifyHelp.code).toBe(0);
  expect(verifyHelp.stdout).toContain('Usage: assent export verify <file>');
  const noOut = await runCli(['export', uniqueSlug()], store.env);
  expect(noOut.code).toBe(2);
  expect(noOut.stderr).toContain('export needs --out FILE');
  const unknown = await runCli(['export', uniqueSlug(), '--out', join(dir, 'never.tar.gz')], store.env);
  expect(unknown.code).toBe(1);
  expect(existsSync(join(dir, 'never.tar.gz'))).toBe(false);
});
