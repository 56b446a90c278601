// Issue 34, item 8: the `log` message provider writes sign-in codes and consent-link tokens into the
// server log. `assent serve` on PostgreSQL (taken for production) refuses to start with it unless
// MESSAGE_PROVIDER=log is set explicitly, and says so; the embedded store keeps it as the default.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { storeKind } from '../support/store.js';
import { createCliStore, killServers, request, runCli, startServer, type CliStore } from './child.js';

let store: CliStore;
beforeAll(async () => {
  store = await createCliStore();
});
afterAll(async () => {
  await killServers();
  await store?.drop();
});

test.runIf(storeKind() === 'postgres')('a server on PostgreSQL with MESSAGE_PROVIDER unset refuses to start, saying why and what to set', async () => {
  const r = await runCli(['serve'], { ...store.env, MESSAGE_PROVIDER: '', PORT: '0', HOST: '127.0.0.1' });
  expect(r.code).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.stderr).toBe(
    'assent: MESSAGE_PROVIDER is not set, and its default, log, writes sign-in codes and consent-link tokens to the server log. ' +
      'On PostgreSQL (DATABASE_URL) set MESSAGE_PROVIDER=http with SMS_WEBHOOK_URL (and EMAIL_WEBHOOK_URL) for production, ' +
      'or MESSAGE_PROVIDER=log to accept that for a test or staging server; see docs/operations.md\n',
  );
});

test('MESSAGE_PROVIDER=log set explicitly: the server starts on either store', async () => {
  const server = await startServer({ ...store.env, MESSAGE_PROVIDER: 'log' });
  expect((await request(server.port, { method: 'GET', path: '/health', host: 'localhost' })).status).toBe(200);
});

test.runIf(storeKind() === 'pglite')('the embedded store with MESSAGE_PROVIDER unset: the log default, the server starts', async () => {
  await killServers(); // the data directory belongs to one server
  const server = await startServer({ ...store.env, MESSAGE_PROVIDER: '' });
  expect((await request(server.port, { method: 'GET', path: '/health', host: 'localhost' })).status).toBe(200);
});
