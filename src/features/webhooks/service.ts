// Webhook endpoints (contract §9): an organization's receivers, the event types each takes, its signing
// secret (shown once, at creation and rotation), and the deliveries made to it. Events themselves are
// written by the features' services (platform/webhooks/events.ts) and sent by the webhook worker.
import type { Database } from '../../platform/db/types.js';
import { withTenant, type TenantTx } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import type { TenantContext } from '../../platform/auth/access.js';
import { AppError } from '../../platform/http/errors.js';
import { isUuid, uuidv7 } from '../../platform/ids.js';
import { urlProblem, type AddressPolicy } from '../../platform/webhooks/address-guard.js';
import { recordTestEvent, together } from '../../platform/webhooks/events.js';
import { newSigningSecret, type SecretBox } from '../../platform/webhooks/secrets.js';
import { recordAudit } from '../audit/index.js';
import { webhookRepo, type DeliveryRow, type EndpointRow } from './repo.js';
import type { CreateWebhookInput, ListDeliveriesInput, UpdateWebhookInput } from './schemas.js';

export interface WebhookServiceDeps {
  db: Database;
  clock: Clock;
  secrets: SecretBox;
  policy: AddressPolicy;
}

const notFound = () => new AppError('not_found', 'Webhook endpoint not found');
const deliveryNotFound = () => new AppError('not_found', 'Webhook delivery not found');

export function createWebhookService({ db, clock, secrets, policy }: WebhookServiceDeps) {
  async function checkUrl(url: string): Promise<void> {
    const problem = await urlProblem(url, policy);
    if (problem) throw new AppError('validation_failed', `Invalid request body: url ${problem}`, [{ field: 'url', message: problem }]);
  }

  return {
    async create(ctx: TenantContext, input: CreateWebhookInput): Promise<EndpointRow & { secret: string }> {
      await checkUrl(input.url);
      const secret = newSigningSecret();
      const at = clock.now();
      const row = await withTenant(db, ctx.orgId, async (tx) => {
        const created = await webhookRepo(tx).insert({
          id: uuidv7(),
          url: input.url,
          description: input.description ?? null,
          events: [...input.events],
          secret: secrets.seal(secret),
          at,
        });
        await recordAudit(tx, ctx, at, { action: 'webhook.created', targetType: 'webhook_endpoint', targetId: created.id, details: { events: created.events } });
        return created;
      });
      return { ...row, secret };
    },

    list(ctx: TenantContext): Promise<{ data: EndpointRow[] }> {
      return withTenant(db, ctx.orgId, async (tx) => ({ data: await webhookRepo(tx).list() }));
    },

    async get(ctx: TenantContext, id: string): Promise<EndpointRow> {
      if (!isUuid(id)) throw notFound();
      const row = await withTenant(db, ctx.orgId, (tx) => webhookRepo(tx).get(id));
      if (!row) throw notFound();
      return row;
    },

    async update(ctx: TenantContext, id: string, input: UpdateWebhookInput): Promise<EndpointRow> {
      if (!isUuid(id)) throw notFound();
      if (input.url !== undefined) await checkUrl(input.url);
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const row = await auditFirst(tx, ctx, at, { action: 'webhook.updated', targetType: 'webhook_endpoint', targetId: id, details: { fields: Object.keys(input) } }, () =>
          webhookRepo(tx).update(id, {
            url: input.url,
            description: input.description,
            events: input.events ? [...input.events] : undefined,
            enabled: input.enabled,
            at,
          }),
        );
        if (!row) throw notFound();
        return row;
      });
    },

    async rotateSecret(ctx: TenantContext, id: string): Promise<EndpointRow & { secret: string }> {
      if (!isUuid(id)) throw notFound();
      const secret = newSigningSecret();
      const at = clock.now();
      const row = await withTenant(db, ctx.orgId, async (tx) => {
        const updated = await auditFirst(tx, ctx, at, { action: 'webhook.secret_rotated', targetType: 'webhook_endpoint', targetId: id }, () =>
          webhookRepo(tx).setSecret(id, secrets.seal(secret), at),
        );
        if (!updated) throw notFound();
        return updated;
      });
      return { ...row, secret };
    },

    async remove(ctx: TenantContext, id: string): Promise<void> {
      if (!isUuid(id)) throw notFound();
      const at = clock.now();
      await withTenant(db, ctx.orgId, async (tx) => {
        // The audit entry first: it takes the organization's audit-chain lock before the endpoint's row lock,
        // the order of every change that records an event (its entry, then its event's FOR KEY SHARE on the
        // endpoint). The other order deadlocked a DELETE with a change in flight (issue 34). Not found: the
        // throw rolls the entry back.
        if (!(await auditFirst(tx, ctx, at, { action: 'webhook.deleted', targetType: 'webhook_endpoint', targetId: id }, () => webhookRepo(tx).remove(id)))) throw notFound();
      });
    },

    async deliveries(ctx: TenantContext, id: string, q: ListDeliveriesInput) {
      if (!isUuid(id)) throw notFound();
      const limit = q.limit ?? 50;
      const offset = q.offset ?? 0;
      return withTenant(db, ctx.orgId, async (tx) => {
        const repo = webhookRepo(tx);
        const [endpoint, page] = await Promise.all([repo.get(id), repo.deliveries(id, { status: q.status, limit, offset })]);
        if (!endpoint) throw notFound();
        return { ...page, limit, offset };
      });
    },

    /** One delivery with every attempt made at it, oldest first. */
    async attempts(ctx: TenantContext, id: string, deliveryId: string) {
      if (!isUuid(id)) throw notFound();
      if (!isUuid(deliveryId)) throw deliveryNotFound();
      return withTenant(db, ctx.orgId, async (tx) => {
        const repo = webhookRepo(tx);
        const [delivery, attempts] = await Promise.all([repo.delivery(id, deliveryId), repo.attempts(deliveryId)]);
        if (!delivery) throw (await repo.get(id)) ? deliveryNotFound() : notFound();
        return { delivery, attempts };
      });
    },

    /** Sends the delivery again (due at once): a disabled endpoint must be enabled first (409). */
    async retry(ctx: TenantContext, id: string, deliveryId: string): Promise<DeliveryRow> {
      if (!isUuid(id)) throw notFound();
      if (!isUuid(deliveryId)) throw deliveryNotFound();
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const repo = webhookRepo(tx);
        const endpoint = await repo.get(id);
        if (!endpoint) throw notFound();
        if (!endpoint.enabled) throw new AppError('conflict', 'The webhook endpoint is disabled: enable it (PATCH enabled: true) before retrying');
        // The audit entry (the organization's audit-chain lock) before the delivery's and the endpoint's row
        // locks, the order of a DELETE of the endpoint: the other order deadlocks with it. Not found: rolled back.
        await recordAudit(tx, ctx, at, { action: 'webhook.delivery_retried', targetType: 'webhook_delivery', targetId: deliveryId });
        if (!(await repo.retry(id, deliveryId, at))) throw deliveryNotFound();
        await repo.wake(id);
        return (await repo.delivery(id, deliveryId))!;
      });
    },

    /** Queues a `webhook.test` event for this endpoint only. */
    async sendTest(ctx: TenantContext, id: string): Promise<DeliveryRow> {
      if (!isUuid(id)) throw notFound();
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const repo = webhookRepo(tx);
        // Locked: a DELETE racing the test would otherwise leave the delivery's insert without its endpoint (23503).
        const endpoint = await repo.get(id, { lock: true });
        if (!endpoint) throw notFound();
        if (!endpoint.enabled) throw new AppError('conflict', 'The webhook endpoint is disabled: enable it (PATCH enabled: true) before sending a test event');
        const { delivery_id } = await recordTestEvent(tx, id, at);
        await repo.wake(id);
        return (await repo.delivery(id, delivery_id))!;
      });
    },
  };
}

/**
 * Appends the audit entry, then runs the change, both queued at once (one round trip): the entry takes
 * the organization's audit-chain lock before the change takes the endpoint's row lock. Every change of
 * an endpoint (PATCH, rotation, DELETE, a delivery's retry) takes them in this order, as does every
 * change that records an event (its entry, then its event's FOR KEY SHARE on the endpoint); the other
 * order deadlocked a DELETE with a PATCH or a rotation in flight (issue 34, found by the concurrent
 * fuzzer). A change that finds nothing makes the caller throw, which rolls the entry back.
 */
async function auditFirst<T>(tx: TenantTx, ctx: TenantContext, at: Date, entry: Parameters<typeof recordAudit>[3], change: () => Promise<T>): Promise<T> {
  const auditing = recordAudit(tx, ctx, at, entry);
  const changing = change();
  await together(auditing, changing);
  return changing;
}

export type WebhookService = ReturnType<typeof createWebhookService>;
