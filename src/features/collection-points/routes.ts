// Asset and collection point management routes (admin key or Bearer): schema, access rule, one service call each.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { tenantOf } from '../../platform/auth/access.js';
import { errorResponses, ListOf } from '../../platform/http/schema-kit.js';
import type { CollectionPointService } from './service.js';
import {
  Asset,
  CollectionPoint,
  CreateAssetBody,
  CreateCollectionPointBody,
  IdParams,
  ListAssetsQuery,
  ListCollectionPointsQuery,
  PointParams,
  UpdateAssetBody,
  UpdateCollectionPointBody,
} from './schemas.js';

// An admin key, or the Bearer token of a member (reading) or an owner or admin (changing).
const readAccess = { apiKey: 'admin', bearer: ['owner', 'admin', 'member'] } as const;
const changeAccess = { apiKey: 'admin', bearer: ['owner', 'admin'] } as const;
const security: Record<string, string[]>[] = [{ ApiKey: [] }, { Bearer: [] }];
const common = { tags: ['Assets and collection points'], security };

export function collectionPointRoutes(app: FastifyInstance, service: CollectionPointService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post('/api/v1/assets', {
    config: { access: changeAccess, idempotent: true },
    schema: {
      ...common,
      summary: 'Create an asset',
      description: 'A website, app, call centre or other place where consent is collected. Starts `active`. Scope: `admin`, or a Bearer token of an owner or admin.',
      body: CreateAssetBody,
      response: { 201: Asset, ...errorResponses(400, 401, 403, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.createAsset(tenantOf(req), req.body)),
  });

  r.get('/api/v1/assets', {
    config: { access: readAccess },
    schema: {
      ...common,
      summary: 'List assets',
      description: 'Newest first. `limit` 1-200 (default 50), `offset` (default 0), optional `status`. Scope: `admin`, or a Bearer token of an owner, admin or member.',
      querystring: ListAssetsQuery,
      response: { 200: ListOf(Asset, 'AssetList'), ...errorResponses(400, 401, 403) },
    },
    handler: (req) => service.listAssets(tenantOf(req), req.query),
  });

  r.get('/api/v1/assets/:id', {
    config: { access: readAccess },
    schema: {
      ...common,
      summary: 'Get an asset',
      description: 'Scope: `admin`, or a Bearer token of an owner, admin or member.',
      params: IdParams,
      response: { 200: Asset, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.getAsset(tenantOf(req), req.params.id),
  });

  r.patch('/api/v1/assets/:id', {
    config: { access: changeAccess },
    schema: {
      ...common,
      summary: 'Update or deactivate an asset',
      description: '`name`, `kind`, `status` (`inactive` stops new consent links for its collection points). Scope: `admin`, or a Bearer token of an owner or admin.',
      params: IdParams,
      body: UpdateAssetBody,
      response: { 200: Asset, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: (req) => service.updateAsset(tenantOf(req), req.params.id, req.body),
  });

  r.post('/api/v1/collection-points', {
    config: { access: changeAccess, idempotent: true },
    schema: {
      ...common,
      summary: 'Create a collection point',
      description:
        'Under an active asset, with the notice and its purposes (ids assigned by the service). `display_id` is assigned (`CP001`, `CP002`, ...) unless given; a taken one is 409. `notice_version` starts at 1. Scope: `admin`, or a Bearer token of an owner or admin.',
      body: CreateCollectionPointBody,
      response: { 201: CollectionPoint, ...errorResponses(400, 401, 403, 409, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.createCollectionPoint(tenantOf(req), req.body)),
  });

  r.get('/api/v1/collection-points', {
    config: { access: readAccess },
    schema: {
      ...common,
      summary: 'List collection points',
      description: 'Oldest first (CP001 before CP002). Filters `asset_id`, `status`; `limit` 1-200 (default 50), `offset`. Scope: `admin`, or a Bearer token of an owner, admin or member.',
      querystring: ListCollectionPointsQuery,
      response: { 200: ListOf(CollectionPoint, 'CollectionPointList'), ...errorResponses(400, 401, 403) },
    },
    handler: (req) => service.listCollectionPoints(tenantOf(req), req.query),
  });

  r.get('/api/v1/collection-points/:id', {
    config: { access: readAccess },
    schema: {
      ...common,
      summary: 'Get a collection point',
      description: 'By UUID or display_id. Scope: `admin`, or a Bearer token of an owner, admin or member.',
      params: PointParams,
      response: { 200: CollectionPoint, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.getCollectionPoint(tenantOf(req), req.params.id),
  });

  r.patch('/api/v1/collection-points/:id', {
    config: { access: changeAccess },
    schema: {
      ...common,
      summary: 'Update or deactivate a collection point',
      description:
        '`name`, `notice`, `purposes` (the whole list: include an existing purpose\'s `id` to keep it; items without one are new), `status` (`inactive` refuses new links). A changed notice or purpose list increases `notice_version`. Scope: `admin`, or a Bearer token of an owner or admin.',
      params: PointParams,
      body: UpdateCollectionPointBody,
      response: { 200: CollectionPoint, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: (req) => service.updateCollectionPoint(tenantOf(req), req.params.id, req.body),
  });
}
