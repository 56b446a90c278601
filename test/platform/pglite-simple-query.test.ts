// The one-message session changes on PGlite (src/platform/db/pglite-simple-query.ts): they take effect
// for the session, a refused statement rejects with PostgreSQL's own message and code, and the
// connection answers normally afterwards. PGlite only, so it runs once (in the pglite project).
import { afterAll, beforeAll, expect, test } from 'vitest';
import { PGlite } from '@electric-sql/pglite';
import { errorIn, PgliteStatementError, simpleQuery } from '../../src/platform/db/pglite-simple-query.js';
import { storeKind } from '../support/store.js';

const onPglite = storeKind() === 'pglite';
let pg: PGlite;
beforeAll(async () => {
  if (onPglite) pg = await PGlite.create('memory://');
});
afterAll(async () => pg?.close());

test.runIf(onPglite)('settings made in one message hold for the session, several statements included', async () => {
  await simpleQuery(pg, "set app.org_id = '01a20dc2-d8d3-7625-80c0-1d5ec8345e00'; set application_name = 'probe'");
  const { rows } = await pg.query<{ org: string; app: string }>("select current_setting('app.org_id') as org, current_setting('application_name') as app");
  expect(rows).toEqual([{ org: '01a20dc2-d8d3-7625-80c0-1d5ec8345e00', app: 'probe' }]);
});

test.runIf(onPglite)("a refused statement rejects with PostgreSQL's message and code, and the connection goes on", async () => {
  const refused = await simpleQuery(pg, 'set role no_such_role').then(
    () => null,
    (e: unknown) => e,
  );
  expect(refused).toBeInstanceOf(PgliteStatementError);
  expect((refused as PgliteStatementError).message).toBe('role "no_such_role" does not exist');
  expect((refused as PgliteStatementError).code).toBe('22023');
  // A failure in the middle of several statements undoes the ones before it (one implicit transaction).
  await simpleQuery(pg, "set app.probe = 'before'");
  await expect(simpleQuery(pg, "set app.probe = 'changed'; select 1/0")).rejects.toThrow('division by zero');
  expect((await pg.query<{ v: string }>("select current_setting('app.probe') as v")).rows).toEqual([{ v: 'before' }]);
  expect((await pg.query<{ n: number }>('select 1 as n')).rows).toEqual([{ n: 1 }]);
});

test('errorIn reads the first ErrorResponse among the messages of a reply, and nothing else', () => {
  const message = (type: string, body: number[]) => {
    const m = new Uint8Array(5 + body.length);
    m[0] = type.charCodeAt(0);
    new DataView(m.buffer).setInt32(1, 4 + body.length);
    m.set(body, 5);
    return [...m];
  };
  const field = (code: string, value: string) => [code.charCodeAt(0), ...new TextEncoder().encode(value), 0];
  const commandComplete = message('C', [...new TextEncoder().encode('SET'), 0]);
  const readyForQuery = message('Z', ['I'.charCodeAt(0)]);
  const error = message('E', [...field('S', 'ERROR'), ...field('C', '42704'), ...field('M', 'unrecognized configuration parameter "x"'), 0]);
  expect(errorIn(Uint8Array.from([...commandComplete, ...readyForQuery]))).toBeNull();
  const found = errorIn(Uint8Array.from([...commandComplete, ...error, ...readyForQuery]));
  expect(found?.message).toBe('unrecognized configuration parameter "x"');
  expect(found?.code).toBe('42704');
  // An ErrorResponse byte inside another message's body is not a message.
  expect(errorIn(Uint8Array.from([...message('C', [0x45, 0x45, 0]), ...readyForQuery]))).toBeNull();
});
