// One simple-protocol Query message to PGlite, for the statements that change its session (role,
// tenant): PGlite's exec() sends the Query, then a Sync it does not need, parses every reply into
// result objects, and syncs the file system; a tenant read sets its tenant this way before nearly
// every statement. Here the message goes in one call and only an error is looked for in the reply.
import type { PGlite } from '@electric-sql/pglite';

const QUERY = 0x51; // 'Q'
const ERROR_RESPONSE = 0x45; // 'E'
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class PgliteStatementError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'PgliteStatementError';
  }
}

function queryMessage(sql: string): Uint8Array {
  const text = encoder.encode(sql);
  const message = new Uint8Array(1 + 4 + text.length + 1);
  message[0] = QUERY;
  new DataView(message.buffer).setInt32(1, 4 + text.length + 1);
  message.set(text, 5);
  return message; // the last byte stays 0: the string's terminator
}

/** The first ErrorResponse in a reply (messages: a type byte, a 4-byte length, the body), or null. */
export function errorIn(reply: Uint8Array): PgliteStatementError | null {
  const view = new DataView(reply.buffer, reply.byteOffset, reply.byteLength);
  for (let at = 0; at + 5 <= reply.length; at += 1 + view.getInt32(at + 1)) {
    if (reply[at] !== ERROR_RESPONSE) continue;
    const end = at + 1 + view.getInt32(at + 1);
    const fields = new Map<string, string>();
    // Fields: a code byte, then a NUL-terminated string; a NUL code byte ends them.
    for (let f = at + 5; f < end && reply[f] !== 0; ) {
      const stop = reply.indexOf(0, f + 1);
      fields.set(String.fromCharCode(reply[f]!), decoder.decode(reply.subarray(f + 1, stop)));
      f = stop + 1;
    }
    return new PgliteStatementError(fields.get('M') ?? 'PGlite refused the statement', fields.get('C'));
  }
  return null;
}

/**
 * Runs `sql` (one or more statements, no parameters, no rows wanted) as one Query message; rejects
 * with the server's error. The caller must hold the connection: nothing else may use it meanwhile.
 */
export async function simpleQuery(pg: PGlite, sql: string): Promise<void> {
  const reply = await pg.execProtocolRaw(queryMessage(sql), { syncToFs: false });
  const error = errorIn(reply);
  if (error) throw error;
}
