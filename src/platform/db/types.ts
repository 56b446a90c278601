// The narrow database surface the rest of the code sees: a query function, a tenant transaction, a system handle.

/** Runs one parameterised statement and returns its rows. */
export interface Queryable {
  query<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<T[]>;
}

/** A transaction that can also run a multi-statement script (migrations). */
export interface ScriptRunner extends Queryable {
  exec(script: string): Promise<void>;
}

export interface Database {
  readonly kind: 'pglite' | 'postgres';
  /**
   * The owner connection, used before a tenant is known (host and key lookups, organization creation,
   * migrations). Bypasses row-level security: confined to platform/ and features/accounts.
   */
  readonly system: Queryable & {
    transaction<T>(fn: (tx: ScriptRunner) => Promise<T>): Promise<T>;
    exec(script: string): Promise<void>;
  };
  /** Runs fn in one transaction as the `assent_app` role with `app.org_id` set: row-level security applies. */
  tenantTransaction<T>(orgId: string, fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * One read statement with its tenant, for the hot one-statement reads: on PostgreSQL the tenant for
   * a read lane's session and the statement, pipelined (one round trip); on PGlite the tenant for the
   * session, then the statement. Not a transaction, and run again after some failures: never a write.
   */
  tenantQuery<T = Record<string, unknown>>(orgId: string, text: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * PostgreSQL only (undefined on PGlite, which one process owns): LISTEN on a channel over a connection
   * of its own. onConnect runs after each (re)subscription: notifications sent while the connection was
   * down are lost, so a listener forgets what it cached then. onDisconnect runs as soon as the connection
   * is lost (not after close()): until the next onConnect, notifications are not arriving. A lost
   * connection is retried every second.
   */
  listen?(channel: string, onMessage: (payload: string) => void, onConnect: () => void, onDisconnect?: () => void): Promise<{ close(): Promise<void> }>;
  /**
   * PGlite only: runs `copy` with the data directory's path after a CHECKPOINT, holding the one
   * connection until it settles (no statement runs and nothing is written to the directory meanwhile),
   * so what `copy` reads of the directory is a consistent store while the process serves. `assent
   * backup` streams the directory into a file there (src/platform/db/backup.ts).
   */
  withQuietDataDir?<T>(copy: (dataDir: string) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
