// Rights fulfilment (issue 33): the organization's data map, and one task per system for each access,
// correction or erasure request, taken by the systems (webhook or lease API) or done by hand. The ticket
// stays the request: its status follows the tasks and its clock is its own. Every task transition is
// recorded (fulfilment_task_transitions) and audited.
import type { Readable } from 'node:stream';
import type { Database } from '../../platform/db/types.js';
import { tenantReads, withTenant, type TenantTx } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import type { ActingContext, TenantContext } from '../../platform/auth/access.js';
import { AppError } from '../../platform/http/errors.js';
import { isUuid, uuidv7 } from '../../platform/ids.js';
import { generateApiKey } from '../../platform/crypto/api-keys.js';
import { recordEvent, together } from '../../platform/webhooks/events.js';
import { alongsideAudit, recordAudit } from '../audit/index.js';
import type { ReceiptSigner } from '../receipts/index.js';
import { dataMapRepo, taskRepo, type CategoryRow, type FulfilmentSettings, type RetentionHold, type SystemRow, type TaskRow } from './repo.js';
import { packageRepo, type PackageRow, type PartRow } from './package-repo.js';
import { openChunk, openDataKey, PACKAGE_DAYS, PACKAGE_FORMAT, packageStream, sealContent, sha256Of, signPackageManifest, systemFolder, type PackageEntry } from './package.js';
import type {
  ClaimInput,
  CompleteInput,
  CreateCategoryInput,
  CreateSystemInput,
  FailInput,
  HeartbeatInput,
  ListTasksInput,
  ScheduleErasureInput,
  TaskKind,
  UpdateCategoryInput,
  UpdateSystemInput,
} from './schemas.js';

const TICKET_ID = /^GRV-[A-Z0-9]{8}$/;
const categoryNotFound = () => new AppError('not_found', 'Data category not found');
const systemNotFound = () => new AppError('not_found', 'System not found');
const taskNotFound = () => new AppError('not_found', 'Task not found');
const ticketNotFound = () => new AppError('not_found', 'Grievance ticket not found');

/** The request categories that become tasks, and the task kind each becomes. */
export const KIND_OF_CATEGORY: Readonly<Record<string, TaskKind>> = {
  data_access: 'access',
  data_portability: 'access',
  rectification: 'correction',
  erasure: 'erasure',
};

const DEFAULT_LEASE_SECONDS = 300;
/** DPDP Rule 8(2): the person is told at least 48 hours before an erasure the organization schedules. */
const NOTICE_MS = 48 * 3_600_000;

/** What a ticket's status does as its tasks move: the grievances service's in-transaction status change. */
export interface TicketStatusMover {
  moveStatusIn(
    tx: TenantTx,
    ctx: TenantContext,
    m: { ticketId: string; status: 'in_progress' | 'resolved'; note: string; at: Date; onlyFrom: readonly ('open' | 'in_progress' | 'on_hold')[] },
  ): Promise<boolean>;
  addSystemMessageIn(tx: TenantTx, ctx: TenantContext, m: { ticketId: string; text: string; at: Date }): Promise<void>;
  fileIn(tx: TenantTx, ctx: TenantContext, input: { client_user_id: string; subject: string; description: string; category: 'erasure' }, at: Date): Promise<{ ticket_id: string; category: string; client_user_id: string }>;
}

export interface FulfilmentServiceDeps {
  db: Database;
  clock: Clock;
  /** Set once the grievances service exists (it, in turn, calls startForTicket on filing). */
  tickets: () => TicketStatusMover;
  /** The organization's current key signs the package manifest (the receipts' signer). */
  signer: () => ReceiptSigner;
  /** The ASSENT_SECRET_KEY-derived key that seals the parts' data keys. */
  sealingKey: Buffer;
  /** Largest part a system may attach, in bytes. */
  partMaxBytes: number;
}

/** A package as shown to the person: its files (from the signed manifest) and whether it can still be downloaded. */
export interface ShownPackage {
  id: string;
  ticket_id: string;
  status: 'available' | 'expired';
  created_at: Date;
  expires_at: Date;
  erased_at: Date | null;
  downloads: number;
  files: { path: string; size: number; sha256: string }[];
}

const packageNotFound = () => new AppError('not_found', 'Access package not found');

function shownPackage(p: PackageRow, now: Date): ShownPackage {
  const manifest = JSON.parse(p.manifest) as { files: ShownPackage['files'] };
  return {
    id: p.id,
    ticket_id: p.ticket_id,
    status: p.erased_at === null && p.expires_at > now ? 'available' : 'expired',
    created_at: p.created_at,
    expires_at: p.expires_at,
    erased_at: p.erased_at,
    downloads: p.downloads,
    files: manifest.files,
  };
}

/** The task as shown, with what blocks it in words. */
export type ShownTask = TaskRow & { blocked_by: string | null };

function shown(t: TaskRow): ShownTask {
  let blocked: string | null = null;
  if (t.status === 'failed') blocked = `Failed: ${t.failure_reason ?? 'no reason given'}. Retry it once the cause is fixed.`;
  else if (t.status === 'queued' && t.not_before !== null) blocked = `Scheduled erasure: not before ${new Date(t.not_before).toISOString()} (the person was told at least 48 hours ahead).`;
  else if (t.status === 'queued' && t.mode === 'manual') blocked = `Waits for a member to do it in ${t.system_name} and report it done.`;
  else if (t.status === 'queued') blocked = `Waits for ${t.system_name} to take it.`;
  else if (t.status === 'leased') blocked = `${t.system_name} is working on it.`;
  return { ...t, blocked_by: blocked };
}

/** Holds per category across systems: what is kept, where, until when and why. */
function retentionHolds(holds: (RetentionHold & { system: string })[]) {
  const byKey = new Map<string, RetentionHold & { systems: string[] }>();
  for (const h of holds) {
    const seen = byKey.get(h.category_key);
    if (seen) seen.systems.push(h.system);
    else byKey.set(h.category_key, { category_key: h.category_key, category_name: h.category_name, until: h.until, basis: h.basis, systems: [h.system] });
  }
  return [...byKey.values()].sort((a, b) => a.category_key.localeCompare(b.category_key));
}

/** The fulfilment of a ticket as a whole, from its tasks. */
export function ticketFulfilmentStatus(tasks: Pick<TaskRow, 'status' | 'mode'>[]): 'none' | 'in_progress' | 'waiting' | 'done' {
  if (tasks.length === 0) return 'none';
  if (tasks.every((t) => t.status === 'done')) return 'done';
  if (tasks.some((t) => t.status === 'failed' || (t.mode === 'manual' && t.status === 'queued'))) return 'waiting';
  return 'in_progress';
}

const actorOf = (ctx: TenantContext) => ({ actorType: ctx.actor.type, actorId: ctx.actor.id });

export function createFulfilmentService({ db, clock, tickets, signer, sealingKey, partMaxBytes }: FulfilmentServiceDeps) {
  // ---- the data map --------------------------------------------------------------------------------

  /** Refuses category ids that are not the organization's (400 naming them). */
  async function checkCategories(tx: TenantTx, ids: string[] | undefined): Promise<void> {
    if (!ids || ids.length === 0) return;
    const unknown = await dataMapRepo(tx).unknownCategories(ids);
    if (unknown.length > 0) {
      throw new AppError('validation_failed', `Unknown data categories: ${unknown.join(', ')}`, unknown.map((id) => ({ field: 'category_ids', message: `${id} is not a data category of this organization` })));
    }
  }

  function checkRetention(c: { retention_days: number | null; retention_basis: string | null }): void {
    if ((c.retention_days === null) !== (c.retention_basis === null)) {
      const field = c.retention_days === null ? 'retention_days' : 'retention_basis';
      throw new AppError('validation_failed', 'retention_days and retention_basis go together: a hold needs its reason', [{ field, message: 'is required with the other retention field' }]);
    }
  }

  const audit = (tx: TenantTx, ctx: TenantContext, at: Date, action: string, targetType: string, targetId: string, details: Record<string, unknown> = {}) =>
    recordAudit(tx, ctx, at, { action, targetType, targetId, details });

  /** Work on one task: locked as stored, visible only to its own system's key (another system's: 404). */
  async function lockTask(tx: TenantTx, ctx: TenantContext, id: string) {
    if (!isUuid(id)) throw taskNotFound();
    const [raw, boundTo] = await Promise.all([taskRepo(tx).lockRaw(id), boundSystem(tx, ctx)]);
    if (!raw || (boundTo && raw.system_id !== boundTo)) throw taskNotFound();
    return { raw, boundTo };
  }

  /** The system a system key acts for; null for every other actor. */
  function boundSystem(tx: TenantTx, ctx: TenantContext): Promise<string | null> {
    return ctx.actor.type === 'api_key' ? dataMapRepo(tx).systemOfKey(ctx.actor.id) : Promise.resolve(null);
  }

  /** A live lease must be shown; a lease that ended is still honoured while nobody else claimed the task. */
  function checkLease(raw: { status: string; lease_id: string | null; lease_expires_at: Date | null }, leaseId: string | undefined, now: Date): void {
    const live = raw.status === 'leased' && raw.lease_expires_at !== null && raw.lease_expires_at > now;
    if (leaseId !== undefined && raw.lease_id !== leaseId) throw new AppError('conflict', 'This lease is no longer yours: the task was claimed again after your lease ended');
    if (live && leaseId === undefined) throw new AppError('conflict', 'The task is leased: send the lease_id of the claim that holds it');
  }

  /** After a task moved: the ticket follows (open -> in_progress on the first move, -> resolved when every task is done). */
  async function ticketFollows(tx: TenantTx, ctx: TenantContext, ticketId: string, at: Date): Promise<void> {
    const counts = await taskRepo(tx).ticketCounts(ticketId);
    if (counts.total > 0 && counts.done === counts.total) {
      await compilePackage(tx, ctx, ticketId, at);
      await tickets().moveStatusIn(tx, ctx, { ticketId, status: 'resolved', note: 'Every fulfilment task is done', at, onlyFrom: ['open', 'in_progress', 'on_hold'] });
    } else {
      await tickets().moveStatusIn(tx, ctx, { ticketId, status: 'in_progress', note: 'Fulfilment under way', at, onlyFrom: ['open'] });
    }
  }

  /** The s.11 summary from the data map, as of now. */
  async function summaryIn(tx: TenantTx, ctx: TenantContext) {
    const repo = dataMapRepo(tx);
    const [categories, systems] = await Promise.all([repo.allCategories(), repo.activeSystems()]);
    const all = new Set<string>();
    const rows = categories.map((c) => {
      const holding = systems.filter((s) => s.category_ids.includes(c.id));
      const sharedWith = [...new Set(holding.flatMap((s) => s.processors))].sort();
      sharedWith.forEach((p) => all.add(p));
      return {
        key: c.key,
        name: c.name,
        description: c.description,
        purposes: c.purposes,
        systems: holding.map((s) => s.name),
        shared_with: sharedWith,
        retention: c.retention_days === null ? null : { days: c.retention_days, basis: c.retention_basis ?? '' },
      };
    });
    return { organization: { slug: ctx.slug, name: ctx.orgName }, categories: rows, shared_with: [...all].sort(), generated_at: clock.now() };
  }

  /**
   * Once every task of an access request is done: the package (the s.11 summary, each system's parts and
   * result, a manifest of SHA-256 sums signed with the organization's key), downloadable for 14 days.
   */
  async function compilePackage(tx: TenantTx, ctx: TenantContext, ticketId: string, at: Date): Promise<void> {
    const tasks = await taskRepo(tx).forTicket(ticketId, at);
    if (tasks.length === 0 || tasks[0]!.kind !== 'access' || (await packageRepo(tx).packageOfTicket(ticketId))) return;
    const [parts, summary, signing] = await Promise.all([packageRepo(tx).partsOfTicket(ticketId), summaryIn(tx, ctx), signer().prepare(tx, null)]);
    const summaryText = JSON.stringify(summary, null, 2);
    const folderOf = new Map(tasks.map((t) => [t.system_id, systemFolder(t.system_name, t.system_id)]));
    const expiresAt = new Date(at.getTime() + PACKAGE_DAYS * 86_400_000);
    const manifest = JSON.stringify(
      {
        format: PACKAGE_FORMAT,
        organization: { id: ctx.orgId, slug: ctx.slug, name: ctx.orgName },
        ticket_id: ticketId,
        dp_id: tasks[0]!.dp_id,
        created_at: at.toISOString(),
        expires_at: expiresAt.toISOString(),
        files: [
          { path: 'summary.json', size: Buffer.byteLength(summaryText), sha256: sha256Of(summaryText) },
          ...parts.map((p) => ({ path: `${folderOf.get(p.system_id)}/${p.name}`, size: p.size, sha256: p.sha256 })),
        ],
        systems: tasks.map((t) => ({ id: t.system_id, name: t.system_name, task_id: t.id, mode: t.mode, completed_at: t.completed_at, result: t.result })),
      },
      null,
      2,
    );
    const id = uuidv7();
    const jws = await signPackageManifest(manifest, await signing.key);
    await Promise.all([
      packageRepo(tx).insertPackage({ id, ticketId, dpId: tasks[0]!.dp_id, manifest, manifestJws: jws, summary: summaryText, expiresAt }, at),
      audit(tx, ctx, at, 'fulfilment.package_compiled', 'grievance', ticketId, { package_id: id, files: parts.length + 1, expires_at: expiresAt.toISOString() }),
    ]);
  }

  /**
   * Creates the ticket's tasks: one per active system that holds data categories, automatic when the
   * system answers that kind of request itself, else manual. Announces each by `fulfilment.task_created`.
   */
  async function createTasks(
    tx: TenantTx,
    ctx: TenantContext,
    ticket: { ticket_id: string; category: string; client_user_id: string },
    at: Date,
    /** Only these categories (an erasure after a withdrawal): systems holding none of them get no task. */
    scope: string[] | null = null,
    /** A scheduled erasure: the tasks wait until then. */
    notBefore: Date | null = null,
  ): Promise<string[]> {
    const kind = KIND_OF_CATEGORY[ticket.category];
    if (!kind) return [];
    const [active, categories] = await Promise.all([dataMapRepo(tx).activeSystems(), kind === 'erasure' ? dataMapRepo(tx).allCategories() : Promise.resolve([])]);
    const inScope = (s: SystemRow) => (scope === null ? s.category_ids : s.category_ids.filter((c) => scope.includes(c)));
    const systems = active.filter((s) => inScope(s).length > 0);
    if (systems.length === 0) return [];
    const automatic = (s: SystemRow) => (kind === 'access' ? s.can_access : kind === 'erasure' ? s.can_erase : s.can_correct);
    // Erasure honours the retention holds of the categories each system holds: kept until the request's
    // time plus the hold, and the person is told what is kept, where, until when and why.
    const holdsOf = (s: SystemRow): RetentionHold[] =>
      categories
        .filter((c) => c.retention_days !== null && inScope(s).includes(c.id))
        .map((c) => ({ category_key: c.key, category_name: c.name, until: new Date(at.getTime() + c.retention_days! * 86_400_000).toISOString(), basis: c.retention_basis ?? '' }));
    const planned = systems.map((s) => ({ id: s.id, taskId: uuidv7(), mode: automatic(s) ? ('automatic' as const) : ('manual' as const), holds: holdsOf(s), scope: scope === null ? null : inScope(s) }));
    const held = retentionHolds(planned.flatMap((p) => p.holds.map((h) => ({ ...h, system: systems.find((s) => s.id === p.id)!.name }))));
    if (held.length > 0) {
      const lines = held.map((h) => `${h.category_name} (in ${h.systems.join(', ')}) until ${h.until.slice(0, 10)}: ${h.basis}`);
      await tickets().addSystemMessageIn(tx, ctx, { ticketId: ticket.ticket_id, text: `Your data will be erased, except what the law requires us to keep, which is erased when its period ends: ${lines.join('; ')}.`, at });
    }
    const ids = await taskRepo(tx).insertTasks({ ticketId: ticket.ticket_id, kind, dpId: ticket.client_user_id, systems: planned, notBefore, ...actorOf(ctx) }, at);
    if (ids.length === 0) return ids;
    // The audit entry first (lock order, docs/architecture.md "Webhooks"); the tasks are read back for
    // their events only when an endpoint listens (a request fanning out to 20 systems otherwise sends 20
    // statements that write nothing).
    const [, subscribed] = await Promise.all([
      audit(tx, ctx, at, 'fulfilment.tasks_created', 'grievance', ticket.ticket_id, { kind, task_ids: ids }),
      taskRepo(tx).taskEventsSubscribed(),
    ]);
    if (subscribed) {
      const created = (await taskRepo(tx).forTicket(ticket.ticket_id, at)).filter((t) => ids.includes(t.id));
      await together(...created.map((t) => recordEvent(tx, 'fulfilment.task_created', { task: shown(t) }, at)));
    }
    return ids;
  }

  const service = {
    // Categories
    createCategory(ctx: TenantContext, input: CreateCategoryInput): Promise<CategoryRow> {
      const row = {
        id: uuidv7(),
        key: input.key,
        name: input.name,
        description: input.description ?? null,
        purposes: input.purposes ?? [],
        retention_days: input.retention_days ?? null,
        retention_basis: input.retention_basis ?? null,
      };
      checkRetention(row);
      const at = clock.now();
      return withTenant(db, ctx.orgId, (tx) =>
        alongsideAudit(tx, ctx, at, { action: 'data_category.created', targetType: 'data_category', targetId: row.id, details: { key: row.key } }, dataMapRepo(tx).insertCategory(row, at)),
      );
    },

    async listCategories(ctx: TenantContext, q: { limit?: number; offset?: number }) {
      const limit = q.limit ?? 50;
      const offset = q.offset ?? 0;
      return { ...(await dataMapRepo(tenantReads(db, ctx.orgId)).listCategories(limit, offset)), limit, offset };
    },

    async getCategory(ctx: TenantContext, id: string): Promise<CategoryRow> {
      if (!isUuid(id)) throw categoryNotFound();
      const row = await dataMapRepo(tenantReads(db, ctx.orgId)).getCategory(id);
      if (!row) throw categoryNotFound();
      return row;
    },

    updateCategory(ctx: TenantContext, id: string, input: UpdateCategoryInput): Promise<CategoryRow> {
      if (!isUuid(id)) return Promise.reject(categoryNotFound());
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const current = await dataMapRepo(tx).getCategory(id);
        if (!current) throw categoryNotFound();
        const next = { ...current, ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) } as CategoryRow;
        checkRetention(next);
        const [row] = await Promise.all([
          dataMapRepo(tx).updateCategory(id, next, at),
          audit(tx, ctx, at, 'data_category.updated', 'data_category', id, { fields: Object.keys(input) }),
        ]);
        return row;
      });
    },

    removeCategory(ctx: TenantContext, id: string): Promise<{ message: string }> {
      if (!isUuid(id)) return Promise.reject(categoryNotFound());
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const { removed, held } = await dataMapRepo(tx).removeCategory(id);
        if (held) throw new AppError('conflict', 'A system holds this data category: remove it from the system first');
        if (!removed) throw categoryNotFound();
        await audit(tx, ctx, at, 'data_category.deleted', 'data_category', id);
        return { message: 'Data category deleted' };
      });
    },

    // Systems
    createSystem(ctx: TenantContext, input: CreateSystemInput): Promise<SystemRow> {
      const at = clock.now();
      const row = {
        id: uuidv7(),
        name: input.name,
        owner: input.owner,
        description: input.description ?? null,
        category_ids: (input.category_ids ?? []).map((c) => c.toLowerCase()),
        processors: input.processors ?? [],
        can_access: input.can_access ?? false,
        can_correct: input.can_correct ?? false,
        can_erase: input.can_erase ?? false,
      };
      return withTenant(db, ctx.orgId, async (tx) => {
        await checkCategories(tx, row.category_ids);
        return alongsideAudit(tx, ctx, at, { action: 'system.created', targetType: 'system', targetId: row.id }, dataMapRepo(tx).insertSystem(row, at));
      });
    },

    async listSystems(ctx: TenantContext, q: { limit?: number; offset?: number }) {
      const limit = q.limit ?? 50;
      const offset = q.offset ?? 0;
      return { ...(await dataMapRepo(tenantReads(db, ctx.orgId)).listSystems(limit, offset)), limit, offset };
    },

    async getSystem(ctx: TenantContext, id: string): Promise<SystemRow> {
      if (!isUuid(id)) throw systemNotFound();
      const row = await dataMapRepo(tenantReads(db, ctx.orgId)).getSystem(id);
      if (!row) throw systemNotFound();
      return row;
    },

    updateSystem(ctx: TenantContext, id: string, input: UpdateSystemInput): Promise<SystemRow> {
      if (!isUuid(id)) return Promise.reject(systemNotFound());
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const current = await dataMapRepo(tx).getSystem(id, true);
        if (!current) throw systemNotFound();
        const changes = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
        if (input.category_ids) changes.category_ids = input.category_ids.map((c) => c.toLowerCase());
        await checkCategories(tx, input.category_ids);
        const [row] = await Promise.all([dataMapRepo(tx).updateSystem(id, { ...current, ...changes } as SystemRow, at), audit(tx, ctx, at, 'system.updated', 'system', id, { fields: Object.keys(input) })]);
        return row;
      });
    },

    /** A key for the system (scope `fulfilment`, bound to it): shown once. */
    createSystemKey(ctx: TenantContext, id: string, input: { name?: string }) {
      if (!isUuid(id)) return Promise.reject(systemNotFound());
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const system = await dataMapRepo(tx).getSystem(id);
        if (!system) throw systemNotFound();
        const generated = generateApiKey();
        const keyId = uuidv7();
        const [row] = await Promise.all([
          dataMapRepo(tx).insertSystemKey({ id: keyId, systemId: system.id, name: input.name ?? `System: ${system.name}`.slice(0, 255), prefix: generated.prefix, hash: generated.hash }, at),
          audit(tx, ctx, at, 'system.key_created', 'system', system.id, { key_id: keyId }),
        ]);
        return { ...row, key: generated.key, system_id: system.id };
      });
    },

    /** The s.11 summary: what is held, what for, with whom it is shared, and how long it is kept. */
    summary(ctx: TenantContext) {
      return summaryIn(tenantReads(db, ctx.orgId), ctx);
    },

    /** The same summary, for the person themselves (their data is held in the organization's systems). */
    summaryMine(ctx: ActingContext) {
      return service.summary(ctx);
    },

    // ---- tasks -------------------------------------------------------------------------------------

    /**
     * An erasure the organization schedules itself (the purpose is no longer served): at least 48 hours
     * ahead (DPDP Rule 8(2)). Files an erasure request for the person now, tells them on it (and by
     * message) what will be erased and when, and creates its tasks, which no system can take before then.
     */
    scheduleErasure(ctx: TenantContext, input: ScheduleErasureInput) {
      const now = clock.now();
      const eraseAt = new Date(input.erase_at);
      if (Number.isNaN(eraseAt.getTime())) return Promise.reject(new AppError('validation_failed', 'Invalid request body: erase_at must be an ISO 8601 date-time with a time zone', [{ field: 'erase_at', message: 'must be an ISO 8601 date-time with a time zone' }]));
      if (eraseAt.getTime() < now.getTime() + NOTICE_MS) {
        const earliest = new Date(now.getTime() + NOTICE_MS).toISOString();
        return Promise.reject(
          new AppError('validation_failed', `Invalid request body: erase_at must be at least 48 hours from now (DPDP Rule 8(2)): ${earliest} or later`, [
            { field: 'erase_at', message: `must be at least 48 hours from now (${earliest} or later)` },
          ]),
        );
      }
      return withTenant(db, ctx.orgId, async (tx) => {
        const ticket = await tickets().fileIn(tx, ctx, { client_user_id: input.dp_id, subject: 'Scheduled erasure', description: input.reason, category: 'erasure' }, now);
        const ids = await createTasks(tx, ctx, ticket, now, null, eraseAt);
        if (ids.length === 0) throw new AppError('conflict', 'No active system holds data categories: register the systems first');
        await Promise.all([
          tickets().addSystemMessageIn(tx, ctx, {
            ticketId: ticket.ticket_id,
            text: `Your personal data will be erased on ${eraseAt.toISOString().replace('T', ' ').slice(0, 16)} UTC: ${input.reason} If you want it kept, contact us before then.`,
            at: now,
          }),
          audit(tx, ctx, now, 'fulfilment.erasure_scheduled', 'grievance', ticket.ticket_id, { erase_at: eraseAt.toISOString(), task_ids: ids }),
        ]);
        return service.ticketIn(tx, ticket.ticket_id, now);
      });
    },

    /**
     * The organization's choices: whether a consent withdrawal starts erasure tasks, and whether a
     * verified nominee may act for the person who appointed them (both off unless turned on).
     */
    settings(ctx: TenantContext): Promise<FulfilmentSettings> {
      return dataMapRepo(tenantReads(db, ctx.orgId)).settings();
    },

    /** Changes the settings given; the others are kept. */
    changeSettings(ctx: TenantContext, input: Partial<FulfilmentSettings>): Promise<FulfilmentSettings> {
      const at = clock.now();
      const changes = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
      return withTenant(db, ctx.orgId, async (tx) => {
        const [settings] = await Promise.all([dataMapRepo(tx).changeSettings(changes, at), audit(tx, ctx, at, 'fulfilment.settings_changed', 'organization', ctx.orgId, changes)]);
        return settings;
      });
    },

    /**
     * Called in a consent withdrawal's transaction: when the organization turned it on, the data held
     * for the withdrawn purposes (the categories whose purposes name one of them, compared without case)
     * is erased through an erasure request filed for the person, with a task for each system holding it.
     */
    async startForWithdrawal(tx: TenantTx, ctx: TenantContext, w: { dpId: string; purposes: string[]; consentId: string }, at: Date): Promise<void> {
      if (w.purposes.length === 0 || !(await dataMapRepo(tx).eraseOnWithdrawal())) return;
      const withdrawn = new Set(w.purposes.map((p) => p.toLowerCase()));
      const categories = (await dataMapRepo(tx).allCategories()).filter((c) => c.purposes.some((p) => withdrawn.has(p.toLowerCase())));
      if (categories.length === 0) return;
      const active = await dataMapRepo(tx).activeSystems();
      if (!active.some((s) => s.category_ids.some((id) => categories.some((c) => c.id === id)))) return;
      const ticket = await tickets().fileIn(
        tx,
        ctx,
        {
          client_user_id: w.dpId,
          subject: 'Erasure after consent withdrawal',
          description: `Consent was withdrawn (record ${w.consentId}) for: ${w.purposes.join(', ')}. The data held for these purposes is erased: ${categories.map((c) => c.name).join(', ')}.`,
          category: 'erasure',
        },
        at,
      );
      await createTasks(tx, ctx, ticket, at, categories.map((c) => c.id));
    },

    /** Called in the creating transaction of every ticket. */
    async startForTicket(tx: TenantTx, ctx: TenantContext, ticket: { ticket_id: string; category: string; client_user_id: string }, at: Date): Promise<void> {
      await createTasks(tx, ctx, ticket, at);
    },

    /**
     * Accepts a request whose tasks were not created on filing (filed before its systems were registered,
     * or its tasks were all for systems since archived): creates them now. 409 when it has tasks.
     */
    start(ctx: TenantContext, ticketId: string) {
      if (!TICKET_ID.test(ticketId)) return Promise.reject(ticketNotFound());
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const rows = await tx.query<{ ticket_id: string; category: string; client_user_id: string; tasks: number }>(
          `select g.ticket_id, g.category, g.client_user_id, (select count(*)::int from fulfilment_tasks t where t.org_id = g.org_id and t.ticket_id = g.ticket_id) as tasks
             from grievances g where g.org_id = $1::uuid and g.ticket_id = $2::text for update`,
          [tx.orgId, ticketId],
        );
        const ticket = rows[0];
        if (!ticket) throw ticketNotFound();
        if (!KIND_OF_CATEGORY[ticket.category]) throw new AppError('conflict', `A ${ticket.category} ticket has no fulfilment: only data_access, data_portability, rectification and erasure requests do`);
        if (ticket.tasks > 0) throw new AppError('conflict', 'This request already has its tasks');
        const ids = await createTasks(tx, ctx, ticket, at);
        if (ids.length === 0) throw new AppError('conflict', 'No active system holds data categories: register the systems first');
        return service.ticketIn(tx, ticketId, at);
      });
    },

    async ticketIn(tx: TenantTx, ticketId: string, now: Date) {
      const [tasks, transitions, parts, pkg] = await Promise.all([
        taskRepo(tx).forTicket(ticketId, now),
        taskRepo(tx).transitions(ticketId),
        packageRepo(tx).partsOfTicket(ticketId),
        packageRepo(tx).packageOfTicket(ticketId),
      ]);
      return {
        ticket_id: ticketId,
        status: ticketFulfilmentStatus(tasks),
        tasks: tasks.map(shown),
        transitions,
        parts,
        retention_holds: retentionHolds(tasks.flatMap((t) => t.holds.map((h) => ({ ...h, system: t.system_name })))),
        package: pkg ? shownPackage(pkg, now) : null,
      };
    },

    /**
     * A system's part of an access request (JSON or a file up to partMaxBytes), stored encrypted. Only
     * on an access task that is not finished; a leased task needs its lease_id; a name once per task.
     */
    attachPart(ctx: TenantContext, taskId: string, input: { name: string; contentType: string; content: Buffer; leaseId?: string }): Promise<PartRow> {
      if (input.content.length > partMaxBytes) {
        return Promise.reject(new AppError('payload_too_large', `A part is at most ${partMaxBytes} bytes (FULFILMENT_PART_MAX_BYTES)`));
      }
      const now = clock.now();
      const sealed = sealContent(sealingKey, input.content);
      return withTenant(db, ctx.orgId, async (tx) => {
        const { raw, boundTo } = await lockTask(tx, ctx, taskId);
        const task = (await taskRepo(tx).get(raw.id, now))!;
        if (task.kind !== 'access') throw new AppError('conflict', `Parts belong to access requests; this is a ${task.kind} task`);
        if (raw.status === 'done' || raw.status === 'failed') throw new AppError('conflict', `The task is ${raw.status}: attach parts before reporting it done`);
        if (raw.mode === 'manual' && boundTo) throw new AppError('conflict', 'A manual task is worked by a member of the organization, not by a system key');
        checkLease(raw, input.leaseId, now);
        const id = uuidv7();
        await Promise.all([
          packageRepo(tx).insertPart({ id, taskId: raw.id, ticketId: raw.ticket_id, systemId: raw.system_id, name: input.name, contentType: input.contentType, size: sealed.size, sha256: sealed.sha256, keyEnc: sealed.keyEnc, chunks: sealed.chunks }, now),
          audit(tx, ctx, now, 'fulfilment.part_attached', 'fulfilment_task', raw.id, { part_id: id, size: sealed.size, sha256: sealed.sha256 }),
        ]);
        return (await packageRepo(tx).partsOfTask(raw.id)).find((p) => p.id === id)!;
      });
    },

    /** The person's packages, newest first (their DP token or Rights Center session, or their nominee's token). */
    async myPackages(ctx: ActingContext): Promise<ShownPackage[]> {
      const now = clock.now();
      const rows = await packageRepo(tenantReads(db, ctx.orgId)).packagesOf(ctx.actor.dpId);
      return rows.map((p) => shownPackage(p, now));
    },

    /**
     * Opens one of the person's packages for download: 404 for another person's, 410 once its 14 days
     * are over (its content is then erased). Counted and audited with who downloaded it; the content is
     * streamed, a few chunks read at a time.
     */
    async downloadMine(ctx: ActingContext, packageId: string): Promise<{ filename: string; stream: Readable; size?: number }> {
      if (!isUuid(packageId)) throw packageNotFound();
      const now = clock.now();
      const { pkg, parts } = await withTenant(db, ctx.orgId, async (tx) => {
        const found = await packageRepo(tx).packageOf(ctx.actor.dpId, packageId);
        if (!found) throw packageNotFound();
        if (found.erased_at !== null || found.expires_at <= now || found.summary === null) {
          throw new AppError('gone', `This package could be downloaded until ${found.expires_at.toISOString()}; its content has been erased`);
        }
        await Promise.all([
          packageRepo(tx).countDownload(found.id, now),
          audit(tx, ctx, now, 'fulfilment.package_downloaded', 'access_package', found.id, { ticket_id: found.ticket_id }),
        ]);
        return { pkg: found, parts: await packageRepo(tx).partsOfTicket(found.ticket_id) };
      });
      const reads = packageRepo(tenantReads(db, ctx.orgId));
      const folderOf = (p: PartRow) => systemFolder(p.system_name, p.system_id);
      const summary = Buffer.from(pkg.summary!);
      const once = (b: Buffer) => async function* () { yield b; };
      const entries: PackageEntry[] = [
        { path: 'summary.json', size: summary.length, content: once(summary) },
        ...parts.map((p) => ({
          path: `${folderOf(p)}/${p.name}`,
          size: p.size,
          content: async function* () {
            const keyEnc = await reads.partKey(p.id);
            if (!keyEnc) throw new Error(`part ${p.id} was erased while its package was being read`);
            const dataKey = openDataKey(sealingKey, keyEnc);
            for (let seq = 0; ; ) {
              const batch = await reads.chunks(p.id, seq, 4);
              for (const c of batch) yield openChunk(dataKey, c.data);
              if (batch.length < 4) return;
              seq = batch.at(-1)!.seq + 1;
            }
          },
        })),
        { path: 'manifest.json', size: Buffer.byteLength(pkg.manifest), content: once(Buffer.from(pkg.manifest)) },
        { path: 'manifest.jws', size: Buffer.byteLength(pkg.manifest_jws), content: once(Buffer.from(pkg.manifest_jws)) },
      ];
      const root = `access-${pkg.ticket_id}`;
      return { filename: `${root}.tar.gz`, stream: packageStream(root, entries, pkg.created_at) };
    },

    /**
     * Erases the content of every package past its 14 days (the hourly job of every server). Each
     * organization is worked in its own transactions of at most `batch` packages, taken in turns (one
     * batch of each organization per round), so a large backlog in one organization does not hold the
     * others back; an organization whose erasure fails is reported in `failed` and left for the next
     * run, and the others go on.
     */
    async eraseExpiredPackages(options: { batch?: number } = {}): Promise<{ packages: number; failed: { org_id: string; error: unknown }[] }> {
      const batch = options.batch ?? 100;
      const now = clock.now();
      let pending = (await db.system.query<{ id: string }>('select id from organizations order by id')).map((o) => o.id);
      const failed: { org_id: string; error: unknown }[] = [];
      let packages = 0;
      while (pending.length > 0) {
        const next: string[] = [];
        for (const orgId of pending) {
          try {
            const erased = await withTenant(db, orgId, (tx) => packageRepo(tx).eraseExpired(now, batch));
            packages += erased.length;
            if (erased.length === batch) next.push(orgId);
          } catch (error) {
            failed.push({ org_id: orgId, error });
          }
        }
        pending = next;
      }
      return { packages, failed };
    },

    /** A ticket's tasks and their transitions (the dashboard's view of one request). */
    forTicket(ctx: TenantContext, ticketId: string) {
      if (!TICKET_ID.test(ticketId)) return Promise.reject(ticketNotFound());
      return withTenant(db, ctx.orgId, async (tx) => {
        const exists = await tx.query('select 1 from grievances where org_id = $1::uuid and ticket_id = $2::text', [tx.orgId, ticketId]);
        if (exists.length === 0) throw ticketNotFound();
        return service.ticketIn(tx, ticketId, clock.now());
      });
    },

    list(ctx: TenantContext, q: ListTasksInput) {
      const limit = q.limit ?? 50;
      const offset = q.offset ?? 0;
      const now = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const bound = await boundSystem(tx, ctx);
        // A system key sees its own system's tasks only.
        if (bound && q.system_id && q.system_id.toLowerCase() !== bound) return { data: [], count: 0, limit, offset };
        const page = await taskRepo(tx).list({ status: q.status, systemId: bound ?? q.system_id, ticketId: q.ticket_id, limit, offset }, now);
        return { data: page.data.map(shown), count: page.count, limit, offset };
      });
    },

    get(ctx: TenantContext, id: string): Promise<ShownTask> {
      if (!isUuid(id)) return Promise.reject(taskNotFound());
      return withTenant(db, ctx.orgId, async (tx) => {
        const [row, bound] = await Promise.all([taskRepo(tx).get(id, clock.now()), boundSystem(tx, ctx)]);
        if (!row || (bound && row.system_id !== bound)) throw taskNotFound();
        return shown(row);
      });
    },

    /** Leases the system's oldest claimable tasks: a system key claims for its system, any other key names one. */
    claim(ctx: TenantContext, input: ClaimInput) {
      const now = clock.now();
      const leaseSeconds = input.lease_seconds ?? DEFAULT_LEASE_SECONDS;
      return withTenant(db, ctx.orgId, async (tx) => {
        const bound = await boundSystem(tx, ctx);
        // Another system is invisible to a system key, as another organization's is to any key.
        if (bound && input.system_id && input.system_id.toLowerCase() !== bound) throw systemNotFound();
        const systemId = bound ?? input.system_id?.toLowerCase();
        if (!systemId) throw new AppError('validation_failed', 'system_id is required unless the key is a system key', [{ field: 'system_id', message: 'is required with a key that is not bound to a system' }]);
        const system = await dataMapRepo(tx).getSystem(systemId);
        if (!system) throw systemNotFound();
        const leased = await taskRepo(tx).claim({ systemId, limit: input.limit ?? 1, leaseSeconds, ...actorOf(ctx) }, now);
        if (leased.length === 0) return { data: [] };
        const rows = await Promise.all(leased.map((l) => taskRepo(tx).get(l.id, now)));
        const tasks = rows.map((r, i) => ({ ...shown(r!), lease_id: leased[i]!.lease_id }));
        await together(
          audit(tx, ctx, now, 'fulfilment.tasks_claimed', 'system', systemId, {
            task_ids: leased.map((l) => l.id),
            expired_leases: leased.filter((l) => l.was_expired).map((l) => l.id),
            lease_seconds: leaseSeconds,
          }),
          ...[...new Set(tasks.map((t) => t.ticket_id))].map((ticketId) => ticketFollows(tx, ctx, ticketId, now)),
        );
        return { data: tasks };
      });
    },

    heartbeat(ctx: TenantContext, id: string, input: HeartbeatInput): Promise<ShownTask> {
      const now = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const { raw } = await lockTask(tx, ctx, id);
        if (raw.lease_id !== input.lease_id || raw.status !== 'leased') throw new AppError('conflict', 'This lease is no longer yours: the task was claimed again, or finished');
        if (raw.lease_expires_at !== null && raw.lease_expires_at <= now) throw new AppError('conflict', 'The lease ended: claim the task again');
        const until = new Date(now.getTime() + (input.lease_seconds ?? DEFAULT_LEASE_SECONDS) * 1000);
        await Promise.all([
          taskRepo(tx).transition(raw.id, { status: 'leased', leaseExpiresAt: until }, { action: 'heartbeat', ...actorOf(ctx), detail: null }, now),
          audit(tx, ctx, now, 'fulfilment.task_heartbeat', 'fulfilment_task', raw.id, { lease_expires_at: until.toISOString() }),
        ]);
        return shown((await taskRepo(tx).get(raw.id, now))!);
      });
    },

    complete(ctx: TenantContext, id: string, input: CompleteInput): Promise<ShownTask> {
      const now = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const { raw, boundTo } = await lockTask(tx, ctx, id);
        if (raw.status === 'done') throw new AppError('conflict', 'The task is already done');
        if (raw.status === 'failed') throw new AppError('conflict', 'The task failed: retry it before reporting it done');
        if (raw.mode === 'manual' && boundTo) throw new AppError('conflict', 'A manual task is reported done by a member of the organization, not by a system key');
        if (raw.not_before !== null && raw.not_before > now) throw new AppError('conflict', `A scheduled erasure: not before ${raw.not_before.toISOString()} (the person was told it would happen then)`);
        checkLease(raw, input.lease_id, now);
        await Promise.all([
          taskRepo(tx).transition(raw.id, { status: 'done', clearLease: true, result: input.result ?? {}, failureReason: null, completed: true }, { action: 'completed', ...actorOf(ctx), detail: null }, now),
          audit(tx, ctx, now, 'fulfilment.task_completed', 'fulfilment_task', raw.id, { ticket_id: raw.ticket_id, system_id: raw.system_id }),
        ]);
        await ticketFollows(tx, ctx, raw.ticket_id, now);
        return shown((await taskRepo(tx).get(raw.id, now))!);
      });
    },

    fail(ctx: TenantContext, id: string, input: FailInput): Promise<ShownTask> {
      const now = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const { raw } = await lockTask(tx, ctx, id);
        if (raw.status === 'done' || raw.status === 'failed') throw new AppError('conflict', `The task is already ${raw.status}`);
        checkLease(raw, input.lease_id, now);
        await Promise.all([
          taskRepo(tx).transition(raw.id, { status: 'failed', clearLease: true, failureReason: input.reason }, { action: 'failed', ...actorOf(ctx), detail: input.reason }, now),
          audit(tx, ctx, now, 'fulfilment.task_failed', 'fulfilment_task', raw.id, { ticket_id: raw.ticket_id, system_id: raw.system_id }),
        ]);
        await ticketFollows(tx, ctx, raw.ticket_id, now);
        return shown((await taskRepo(tx).get(raw.id, now))!);
      });
    },

    /** A failed task back to the queue (the dashboard's retry); announced again to webhook systems. */
    retry(ctx: TenantContext, id: string): Promise<ShownTask> {
      const now = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const { raw } = await lockTask(tx, ctx, id);
        if (raw.status !== 'failed') throw new AppError('conflict', 'Only a failed task can be retried');
        await Promise.all([
          taskRepo(tx).transition(raw.id, { status: 'queued', clearLease: true, failureReason: null }, { action: 'retried', ...actorOf(ctx), detail: null }, now),
          audit(tx, ctx, now, 'fulfilment.task_retried', 'fulfilment_task', raw.id, { ticket_id: raw.ticket_id, system_id: raw.system_id }),
        ]);
        const task = shown((await taskRepo(tx).get(raw.id, now))!);
        await recordEvent(tx, 'fulfilment.task_created', { task, retried: true }, now);
        return task;
      });
    },
  };
  return service;
}

export type FulfilmentService = ReturnType<typeof createFulfilmentService>;
