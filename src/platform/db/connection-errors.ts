// A PostgreSQL server that cannot be reached, or that refuses the connection, is a setting to fix, not a
// crash: one sentence naming the problem and DATABASE_URL, never a driver's stack trace.

/** The store could not be opened; the message names the problem and the setting to fix. */
export class StoreUnavailableError extends Error {}

/** Where DATABASE_URL points, without its password: host:port, database and user. */
function target(databaseUrl: string): { where: string; host: string; database: string; user: string } {
  try {
    const url = new URL(databaseUrl);
    const user = decodeURIComponent(url.username) || process.env.PGUSER || process.env.USER || 'postgres';
    const database = decodeURIComponent(url.pathname.slice(1)) || user;
    const host = url.hostname || 'localhost';
    return { where: `${host}:${url.port || '5432'}`, host, database, user };
  } catch {
    return { where: 'the server in DATABASE_URL', host: '?', database: '?', user: '?' };
  }
}

/**
 * One line for an error met while connecting to PostgreSQL, or null when the error is something else
 * (then it is reported as unexpected, with its stack).
 */
export function describeConnectionFailure(e: unknown, databaseUrl: string): string | null {
  const err = e as { code?: unknown; message?: unknown };
  const code = typeof err.code === 'string' ? err.code : '';
  const message = typeof err.message === 'string' ? err.message : String(e);
  const t = target(databaseUrl);
  const fix = 'Check DATABASE_URL.';
  switch (code) {
    case 'ECONNREFUSED':
      return `Cannot connect to PostgreSQL at ${t.where}: connection refused (is PostgreSQL running there, on that port?). ${fix}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `Cannot connect to PostgreSQL: the host "${t.host}" is not known (DNS). ${fix}`;
    case 'ETIMEDOUT':
    case 'CONNECT_TIMEOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `Cannot connect to PostgreSQL at ${t.where}: no answer (${code}; a firewall, or the wrong host or port?). ${fix}`;
    case 'ECONNRESET':
      return `PostgreSQL at ${t.where} closed the connection while it was being opened (does it require TLS? add ?sslmode=require). ${fix}`;
    case '3D000':
      return `PostgreSQL at ${t.where} has no database "${t.database}": create it (createdb ${t.database}) or fix the database name in DATABASE_URL.`;
    case '28000':
      return `PostgreSQL at ${t.where} refused the connection: ${message}. Create that role or fix the user in DATABASE_URL.`;
    case '28P01':
      return `PostgreSQL at ${t.where} refused the password of "${t.user}": fix the password in DATABASE_URL.`;
    case '53300':
      return `PostgreSQL at ${t.where} has no connection to spare (too many clients): raise max_connections or run fewer processes.`;
    case '57P03':
      return `PostgreSQL at ${t.where} is starting up or shutting down: try again shortly.`;
    default:
      if (/SASL|password must be a string/i.test(message)) {
        return `PostgreSQL at ${t.where} asks for a password for "${t.user}" and DATABASE_URL has none. ${fix}`;
      }
      return null;
  }
}
