// Named types for the records the pages show, taken from the client package's generated OpenAPI types, so
// a change to a route schema that the dashboard does not follow fails `npm run typecheck`.
import type { components, paths } from '../../../clients/typescript/src/index';

export type Paths = paths;
export type Components = components;

type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** The 200/201 body of an operation. */
export type Ok<P extends keyof paths, M extends 'get' | 'post' | 'patch' | 'put' | 'delete'> = paths[P][M] extends { responses: infer R }
  ? R extends { 200: infer A }
    ? JsonOf<A>
    : R extends { 201: infer B }
      ? JsonOf<B>
      : never
  : never;
/** The JSON body an operation takes. */
export type BodyOf<P extends keyof paths, M extends 'post' | 'patch' | 'put'> = paths[P][M] extends { requestBody?: infer B } ? JsonOf<NonNullable<B>> : never;
/** The query parameters of a GET. */
export type QueryOf<P extends keyof paths> = paths[P]['get'] extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

export type GrievanceList = Ok<'/api/v1/grievances', 'get'>;
export type Grievance = GrievanceList['data'][number];
export type GrievanceWithHistory = Ok<'/api/v1/grievances/{ticket_id}', 'get'>;
export type GrievanceSummary = Ok<'/api/v1/grievances/summary', 'get'>;
export type GrievanceQuery = QueryOf<'/api/v1/grievances'>;
export type NomineeList = Ok<'/api/v1/nominees', 'get'>;
export type Nominee = NomineeList['data'][number];
export type NomineeQuery = QueryOf<'/api/v1/nominees'>;
export type DailyCounts = Ok<'/api/v1/consent-links/daily', 'get'>;
export type History = Ok<'/api/v1/external/public/consent-link/history', 'get'>;
export type HistoryQuery = QueryOf<'/api/v1/external/public/consent-link/history'>;
export type ConsentRequest = History['data'][number];
export type CreatedLink = Ok<'/api/v1/external/public/consent-link', 'post'>;
export type Asset = Ok<'/api/v1/assets/{id}', 'get'>;
export type CollectionPoint = Ok<'/api/v1/collection-points/{id}', 'get'>;
export type Purpose = CollectionPoint['purposes'][number];
export type ApiKey = Ok<'/api/v1/api-keys', 'get'>[number];
export type CreatedApiKey = Ok<'/api/v1/api-keys', 'post'>;
export type Member = Ok<'/api/v1/members', 'get'>['data'][number];
export type AuditList = Ok<'/api/v1/audit-log', 'get'>;
export type AuditEntry = AuditList['data'][number];
export type AuditQuery = QueryOf<'/api/v1/audit-log'>;
export type CollectionPointChanges = BodyOf<'/api/v1/collection-points/{id}', 'patch'>;
export type WebhookEndpoint = Ok<'/api/v1/webhooks/{id}', 'get'>;
export type WebhookEndpointWithSecret = Ok<'/api/v1/webhooks', 'post'>;
export type WebhookDeliveryList = Ok<'/api/v1/webhooks/{id}/deliveries', 'get'>;
export type WebhookDelivery = WebhookDeliveryList['data'][number];
export type WebhookEventType = WebhookEndpoint['events'][number];
export type WebhookAttempt = Ok<'/api/v1/webhooks/{id}/deliveries/{delivery_id}/attempts', 'get'>['attempts'][number];
export type FulfilmentTask = Ok<'/api/v1/fulfilment/tasks', 'get'>['data'][number];
export type DataCategory = Ok<'/api/v1/data-categories/{id}', 'get'>;
export type DataSystem = Ok<'/api/v1/systems/{id}', 'get'>;
export type SystemKey = Ok<'/api/v1/systems/{id}/keys', 'post'>;
export type TicketFulfilment = Ok<'/api/v1/fulfilment/tickets/{ticket_id}', 'get'>;
export type FulfilmentSettings = Ok<'/api/v1/fulfilment/settings', 'get'>;
