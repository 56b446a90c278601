// Crash test (issue 21): about 1,000 concurrent creates (grievance tickets and consent records) to a real
// `assent serve` process, SIGKILL in the middle of them, a restart on the same store: every create that
// was answered 2xx is found after the restart. On the embedded store the data directory is reopened by
// the new process by itself (no lock left behind by the killed one stops it).
import http from 'node:http';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { cliJson, createCliStore, killServers, request, startServer, uniqueSlug, type CliStore, type ServerProcess } from './child.js';

const CREATES = 1000;
/** SIGKILL once this many creates have been acknowledged (the rest are in flight or not sent yet). */
const KILL_AFTER = 300;

let store: CliStore;
let slug: string;
let key: string;
let host: string;

beforeAll(async () => {
  store = await createCliStore();
  slug = uniqueSlug();
  host = `${slug}.localhost`;
  await cliJson(['org', 'create', slug], store.env);
  key = (await cliJson<{ key: string }>(['key', 'create', slug, '--scopes', 'admin'], store.env)).key;
}, 120_000);

afterAll(async () => {
  await killServers();
  await store?.drop();
});

interface Acknowledged {
  kind: 'ticket' | 'consent';
  id: string;
  dpId: string;
}

/** One POST on its own connection (no keep-alive): resolves with the status and body, or null when cut. */
function post(agent: http.Agent, port: number, path: string, body: unknown): Promise<{ status: number; body: string } | null> {
  return new Promise((resolve) => {
    const payload = JSON.stringify(body);
    const req = http.request(
      { host: '127.0.0.1', port, path, method: 'POST', agent, headers: { host, 'x-api-key': key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', () => resolve(null));
      },
    );
    req.on('error', () => resolve(null));
    req.end(payload);
  });
}

test(
  'SIGKILL during 1,000 concurrent creates: after a restart on the same store every acknowledged create is there',
  async () => {
    let server: ServerProcess = await startServer(store.env, 60_000);
    const asset = (await request(server.port, { method: 'POST', path: '/api/v1/assets', host, key, body: { name: 'App', kind: 'website' } })).json();
    const point = (
      await request(server.port, {
        method: 'POST',
        path: '/api/v1/collection-points',
        host,
        key,
        body: { asset_id: asset.id, name: 'Sign-up', notice: 'Notice', purposes: [{ name: 'Account', required: true }] },
      })
    ).json();
    const purposeId = point.purposes[0].id as string;

    const acknowledged: Acknowledged[] = [];
    let refused = 0;
    let cut = 0;
    let killed: Promise<void> | null = null;
    // 100 connections at a time: a thousand requests queued on them, the server busy throughout.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 100 });
    const port = server.port;
    await Promise.all(
      Array.from({ length: CREATES }, async (_, i) => {
        const dpId = `crash-dp-${i}`;
        const consent = i % 2 === 1;
        const answer = consent
          ? await post(agent, port, `/consent/${point.id}/consent`, { dp_id: dpId, purposes: [{ id: purposeId, granted: true }] })
          : await post(agent, port, '/grievance', { client_user_id: dpId, subject: `Crash ${i}`, description: 'Filed during the crash test', category: 'other' });
        if (answer === null) {
          cut++;
          return;
        }
        if (answer.status !== 201) {
          refused++;
          return;
        }
        const json = JSON.parse(answer.body);
        acknowledged.push(consent ? { kind: 'consent', id: json.consent_id, dpId } : { kind: 'ticket', id: json.ticket_id, dpId });
        if (acknowledged.length === KILL_AFTER && !killed) killed = server.kill();
      }),
    );
    agent.destroy();
    await killed;
    expect(killed).not.toBeNull();
    // The kill came in the middle: some creates were acknowledged, others were cut off.
    expect(refused).toBe(0);
    expect(acknowledged.length).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(cut).toBeGreaterThan(0);
    expect(acknowledged.length + cut).toBe(CREATES);

    // The same store, a new process: it starts without help (the killed one left its data directory as is).
    server = await startServer(store.env, 60_000);
    const missing: Acknowledged[] = [];
    const lookups = new http.Agent({ keepAlive: true, maxSockets: 20 });
    await Promise.all(
      acknowledged.map(async (a) => {
        const path = a.kind === 'ticket' ? `/api/v1/grievances/${a.id}` : `/consent/${point.id}/consent?dp_id=${a.dpId}`;
        const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = http.request({ host: '127.0.0.1', port: server.port, path, method: 'GET', agent: lookups, headers: { host, 'x-api-key': key } }, (r) => {
            let text = '';
            r.setEncoding('utf8');
            r.on('data', (c: string) => (text += c));
            r.on('end', () => resolve({ status: r.statusCode ?? 0, body: text }));
          });
          req.on('error', reject);
          req.end();
        });
        const found = res.status === 200 && (a.kind === 'ticket' ? JSON.parse(res.body).ticket_id === a.id : JSON.parse(res.body).consent_id === a.id);
        if (!found) missing.push(a);
      }),
    );
    lookups.destroy();
    expect(missing).toEqual([]);
    await server.stop(20_000);
  },
  240_000,
);
