// Assets and collection points (contract §5): schemas for management routes and the OpenAPI document.
import { Type, type Static } from 'typebox';
import { Paging, Text, Timestamp } from '../../platform/http/schema-kit.js';

export const ASSET_KINDS = ['website', 'mobile_app', 'call_center', 'offline', 'other'] as const;
export const ACTIVE_STATUSES = ['active', 'inactive'] as const;
export type ActiveStatus = (typeof ACTIVE_STATUSES)[number];

const KindEnum = Type.Unsafe<(typeof ASSET_KINDS)[number]>({ type: 'string', enum: [...ASSET_KINDS], description: 'Where consent is collected' });
const StatusEnum = Type.Unsafe<ActiveStatus>({ type: 'string', enum: [...ACTIVE_STATUSES] });
const Uuid = (description?: string) => Type.String({ format: 'uuid', 'x-message': 'must be a UUID', description });

export const Asset = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    kind: KindEnum,
    status: StatusEnum,
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'Asset' },
);

export const CreateAssetBody = Type.Object({ name: Text(255), kind: KindEnum }, { additionalProperties: false });
export const UpdateAssetBody = Type.Object(
  {
    name: Type.Optional(Text(255)),
    kind: Type.Optional(KindEnum),
    status: Type.Optional(Type.Unsafe<ActiveStatus>({ ...StatusEnum, description: 'inactive: no new consent links for its collection points' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type CreateAssetInput = Static<typeof CreateAssetBody>;
export type UpdateAssetInput = Static<typeof UpdateAssetBody>;

export const Purpose = Type.Object(
  {
    id: Type.String({ description: 'Assigned by the service; stable across edits' }),
    name: Type.String(),
    description: Type.String(),
    required: Type.Boolean({ description: 'Refusing a required purpose makes the consent action `declined`' }),
  },
  { title: 'Purpose' },
);

const PurposeInput = Type.Object(
  {
    id: Type.Optional(Type.String({ maxLength: 64, description: 'On update: the id of an existing purpose to keep; omit for a new one' })),
    name: Text(255),
    description: Type.Optional(Type.String({ maxLength: 1000, default: '' })),
    required: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
const Purposes = Type.Array(PurposeInput, { minItems: 1, maxItems: 50, description: 'At least one, at most 50' });
export type PurposeInputValue = Static<typeof PurposeInput>;

export const CollectionPoint = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    display_id: Type.String({ description: 'Unique in the organization: CP001, CP002, ... unless chosen' }),
    asset_id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    notice: Type.String({ description: 'The notice text shown to the data principal' }),
    notice_version: Type.Integer({ description: 'Starts at 1; increases when the notice or the purposes change' }),
    purposes: Type.Array(Purpose),
    status: StatusEnum,
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'CollectionPoint' },
);

export const DisplayId = Type.String({
  pattern: '^[A-Z0-9_-]{2,32}$',
  'x-message': 'must be 2-32 characters of A-Z, 0-9, _ and -',
  examples: ['CP001'],
});

export const CreateCollectionPointBody = Type.Object(
  {
    asset_id: Uuid('The asset this collection point belongs to'),
    name: Text(255),
    notice: Text(20_000),
    purposes: Purposes,
    display_id: Type.Optional(DisplayId),
  },
  { additionalProperties: false },
);
export const UpdateCollectionPointBody = Type.Object(
  {
    name: Type.Optional(Text(255)),
    notice: Type.Optional(Text(20_000)),
    purposes: Type.Optional(Purposes),
    status: Type.Optional(StatusEnum),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type CreateCollectionPointInput = Static<typeof CreateCollectionPointBody>;
export type UpdateCollectionPointInput = Static<typeof UpdateCollectionPointBody>;

export const ListAssetsQuery = Type.Object({ ...Paging, status: Type.Optional(StatusEnum) });
export const ListCollectionPointsQuery = Type.Object({
  ...Paging,
  asset_id: Type.Optional(Uuid('Only this asset\'s collection points')),
  status: Type.Optional(StatusEnum),
});

export const IdParams = Type.Object({ id: Type.String({ description: 'UUID' }) });
export const PointParams = Type.Object({ id: Type.String({ description: 'UUID or display_id' }) });
