// The dashboard's ApiError is the client package's AssentError: a failed answer keeps its stable code,
// request id and Retry-After, and errors the dashboard raises itself say that they are not the API's.
import { describe, expect, test } from 'vitest';
import { AssentError } from '../../../clients/typescript/src/index';
import { ApiError, apiError, apiErrorFrom, networkError } from './errors';

const answer = (status: number, body: string, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { 'content-type': 'application/json', ...headers } });

describe('ApiError', () => {
  test('a failed answer keeps its code, details, request id and Retry-After', async () => {
    const body = { error: 'Too many requests', code: 'rate_limited', details: [{ field: 'phone', message: 'must be E.164' }] };
    const e = await apiErrorFrom(answer(429, JSON.stringify(body), { 'retry-after': '7', 'x-request-id': 'req-1' }));
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toBeInstanceOf(AssentError);
    expect([e.status, e.code, e.message, e.requestId, e.retryAfterSeconds]).toEqual([429, 'rate_limited', 'Too many requests', 'req-1', 7]);
    expect(e.problemsFor('phone')).toEqual(['must be E.164']);
  });

  test('an answer that is not the API\'s (a proxy page) has no API code', async () => {
    const e = await apiErrorFrom(new Response('<html>Bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }));
    expect([e.status, e.code, e.message]).toEqual([502, 'unexpected_response', 'The server answered 502 Bad Gateway']);
    expect(apiError(answer(400, ''), { error: 'no code here' }).code).toBe('unexpected_response');
  });

  test('a network failure and a thrown AssentError keep what they are', () => {
    expect(networkError().code).toBe('network_error');
    const thrown = new AssentError(409, 'conflict', 'The ticket is already closed', [], 'req-2', null);
    const held = ApiError.of(thrown);
    expect([held.status, held.code, held.message, held.requestId]).toEqual([409, 'conflict', 'The ticket is already closed', 'req-2']);
    expect(ApiError.of(new Error('boom')).code).toBe('unexpected_response');
  });
});
