// Answers made below the routes (issue 34, items 3 and 4), on a real listening server: a malformed path
// (400 malformed_url), a path parameter over the router's limit (414 uri_too_long), headers over Node's
// 16 KiB (431 headers_too_large) and a request Node's parser refuses (400 malformed_request). Each carries
// the contract's body and the headers of every answer (Cache-Control: no-store, X-Content-Type-Options:
// nosniff), and the parser's refusals say Connection: close, so a keep-alive client's next request goes
// out on a new connection instead of into a closing one (ECONNRESET).
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';
import { MAX_PARAM_LENGTH } from '../../src/app.js';

let t: TestApp;
let port: number;
beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as { port: number }).port;
});
afterAll(async () => t?.close());

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request through a keep-alive agent (the connection is reused when the server allows it). */
function send(agent: Agent, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent, headers: { host: 'localhost', ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Raw bytes on one socket, `first` then (once its answer arrived) `second`: everything the server sent
 * until it closed, and whether it closed by a reset.
 */
function raw(first: string, second: string): Promise<{ text: string; reset: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let reset = false;
    socket.on('connect', () => socket.write(first));
    socket.on('data', (c) => {
      const sentSecond = text.length > 0;
      text += c.toString('latin1');
      if (!sentSecond) socket.write(second);
    });
    socket.on('error', (e: NodeJS.ErrnoException) => (reset = e.code === 'ECONNRESET'));
    socket.on('close', () => resolve({ text, reset }));
    socket.setTimeout(5000, () => socket.destroy());
  });
}

function expectEveryAnswerHeaders(headers: IncomingHttpHeaders) {
  expect(headers['cache-control']).toBe('no-store');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['content-type']).toMatch(/^application\/json/);
}

describe('answers made by the HTTP layer carry the headers of every answer and a precise code', () => {
  test('malformed percent-encoding in the path: 400 malformed_url', async () => {
    const agent = new Agent({ keepAlive: true });
    const res = await send(agent, '/grievance/user/%E0%A4%A');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({ error: 'Malformed URL: the path has an invalid percent-encoding', code: 'malformed_url' });
    expectEveryAnswerHeaders(res.headers);
    expect(res.headers['x-request-id']).toBeTruthy();
    agent.destroy();
  });

  test('a path parameter over the router limit: 414 uri_too_long', async () => {
    const agent = new Agent({ keepAlive: true });
    const res = await send(agent, `/grievance/user/${'a'.repeat(MAX_PARAM_LENGTH + 1)}`);
    expect(res.status).toBe(414);
    expect(JSON.parse(res.body)).toEqual({ error: 'URI too long: a path parameter is longer than any id the service accepts', code: 'uri_too_long' });
    expectEveryAnswerHeaders(res.headers);
    // A router refusal is a complete answer: the connection stays usable.
    expect((await send(agent, '/health')).status).toBe(200);
    agent.destroy();
  });

  test('headers over 16 KiB: 431 headers_too_large, Connection: close, and the next request on the agent succeeds (10 of 10)', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    for (let i = 0; i < 10; i++) {
      expect((await send(agent, '/health')).status).toBe(200);
      const res = await send(agent, '/health', { 'x-big': 'b'.repeat(17_000) });
      expect(res.status).toBe(431);
      expect(JSON.parse(res.body)).toEqual({ error: 'Request headers too large: the request line and headers are over 16 KiB', code: 'headers_too_large' });
      expectEveryAnswerHeaders(res.headers);
      expect(res.headers.connection).toBe('close');
      const next = await send(agent, '/health');
      expect(next.status).toBe(200);
    }
    agent.destroy();
  });

  test('a request the parser refuses after a kept-alive one: 400 malformed_request with Connection: close, closed without a reset (10 of 10)', async () => {
    for (let i = 0; i < 10; i++) {
      const { text, reset } = await raw('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n', 'GET /health HTTP/1.1\r\nHost: localhost\r\nBad Header Line\r\n\r\n');
      const answers = text.split(/(?=HTTP\/1\.1 )/);
      expect(answers).toHaveLength(2);
      expect(answers[0]).toMatch(/^HTTP\/1\.1 200 /);
      const [head, body] = answers[1]!.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(head).toMatch(/\r\nConnection: close(\r\n|$)/);
      expect(head).toMatch(/\r\nCache-Control: no-store(\r\n|$)/);
      expect(head).toMatch(/\r\nX-Content-Type-Options: nosniff(\r\n|$)/);
      expect(JSON.parse(body!)).toEqual({ error: 'Malformed HTTP request: the request line or headers could not be parsed', code: 'malformed_request' });
      expect(reset).toBe(false);
    }
  });

  test('a keep-alive client sending conflicting Content-Length and Transfer-Encoding: 400 malformed_request, its next request succeeds', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    for (let i = 0; i < 10; i++) {
      expect((await send(agent, '/health')).status).toBe(200);
      const res = await new Promise<Answer>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port, path: '/health', method: 'POST', agent, headers: { host: 'localhost', 'content-length': '2', 'transfer-encoding': 'chunked' } },
          (r) => {
            let body = '';
            r.setEncoding('utf8');
            r.on('data', (c: string) => (body += c));
            r.on('end', () => resolve({ status: r.statusCode!, headers: r.headers, body }));
          },
        );
        req.on('error', reject);
        req.end('{}');
      });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body).code).toBe('malformed_request');
      expect(res.headers.connection).toBe('close');
      expectEveryAnswerHeaders(res.headers);
      expect((await send(agent, '/health')).status).toBe(200);
    }
    agent.destroy();
  });
});
