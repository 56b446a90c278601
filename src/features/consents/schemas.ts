// Consent record schemas (contract §5): recording, withdrawing and reading a data principal's consent.
import { Type, type Static } from 'typebox';
import { Nullable, Text, Timestamp } from '../../platform/http/schema-kit.js';
import { CONSENT_ACTIONS } from '../consent-links/index.js';

const ActionEnum = Type.Unsafe<(typeof CONSENT_ACTIONS)[number]>({
  type: 'string',
  enum: [...CONSENT_ACTIONS],
  description: 'approved: every purpose granted; partial_consent: some; declined: none, or a required one refused; revoked: withdrawn',
});
const Choice = Type.Object({ id: Type.String({ maxLength: 64 }), granted: Type.Boolean() }, { additionalProperties: false });

export const PointParams = Type.Object({ collection_point_id: Type.String({ description: 'UUID or display_id' }) });

export const RecordConsentBody = Type.Object(
  {
    dp_id: Text(255, { description: 'Your identifier for the data principal' }),
    purposes: Type.Array(Choice, { minItems: 1, maxItems: 50, description: 'Every purpose of the collection point, exactly once' }),
    event_id: Type.Optional(Type.String({ maxLength: 64, description: 'The link instance this consent completes' })),
  },
  { additionalProperties: false },
);
export type RecordConsentInput = Static<typeof RecordConsentBody>;

export const WithdrawConsentBody = Type.Object({ dp_id: Text(255) }, { additionalProperties: false });

export const ConsentRecord = Type.Object(
  {
    consent_id: Type.String({ format: 'uuid' }),
    collection_point_id: Type.String({ format: 'uuid' }),
    dp_id: Type.String(),
    consent_action: ActionEnum,
    purposes: Type.Array(Type.Object({ id: Type.String(), granted: Type.Boolean() })),
    notice_version: Type.Integer({ description: 'The notice version the data principal saw' }),
    request_id: Nullable(Type.String({ format: 'uuid' })),
    event_id: Nullable(Type.String({ format: 'uuid' })),
    created_at: Timestamp(),
  },
  { title: 'ConsentRecord' },
);

export const CurrentConsentQuery = Type.Object({ dp_id: Text(255) });

export const CurrentConsent = Type.Object(
  {
    dp_id: Type.String(),
    collection_point_id: Type.String({ format: 'uuid' }),
    consent_id: Type.String({ format: 'uuid', description: 'The latest record, which holds the current choices' }),
    consent_action: ActionEnum,
    notice_version: Type.Integer({ description: 'The notice version of the latest record' }),
    current_notice_version: Type.Integer({ description: "The collection point's notice version now: ask again when it is higher" }),
    recorded_at: Timestamp(),
    purposes: Type.Array(
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        required: Type.Boolean(),
        granted: Type.Boolean({ description: 'false for a purpose added after the latest record' }),
      }),
    ),
  },
  { title: 'CurrentConsent' },
);

// The data principal's own consents (contract §7), under /api/v1/me with their token.

const ChannelEnum = Type.Unsafe<'api' | 'link' | 'rights_center' | 'sdk'>({
  type: 'string',
  enum: ['api', 'link', 'rights_center', 'sdk'],
  description: "api: the organization's backend; link: a consent link's page; rights_center: the data principal themselves; sdk: an app's banner through the truConsent SDK surface",
});

export const MyConsent = Type.Object(
  {
    collection_point: Type.Object({
      id: Type.String({ format: 'uuid' }),
      display_id: Type.String(),
      name: Type.String(),
      notice: Type.String({ description: 'The notice as it is now' }),
      notice_version: Type.Integer({ description: "The collection point's notice version now" }),
    }),
    consent_action: ActionEnum,
    purposes: Type.Array(
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        required: Type.Boolean(),
        granted: Type.Boolean({ description: 'false for a purpose added after the latest record' }),
      }),
      { description: "Every purpose of the collection point, in its order" },
    ),
    given_at: Timestamp('When the latest record was made'),
    consent_id: Type.String({ format: 'uuid', description: 'The latest record' }),
  },
  { title: 'MyConsent' },
);

export const MyConsentRecord = Type.Object(
  {
    consent_id: Type.String({ format: 'uuid' }),
    collection_point_id: Type.String({ format: 'uuid' }),
    consent_action: ActionEnum,
    purposes: Type.Array(Type.Object({ id: Type.String(), granted: Type.Boolean() })),
    notice_version: Type.Integer({ description: 'The notice version the data principal saw' }),
    channel: ChannelEnum,
    created_at: Timestamp(),
  },
  { title: 'MyConsentRecord' },
);

export const MyConsentBody = Type.Object(
  { purposes: Type.Array(Choice, { minItems: 1, maxItems: 50, description: 'Every purpose of the collection point, exactly once' }) },
  { additionalProperties: false, description: "dp_id is always the token's, never taken from the body" },
);

// Signed receipts (docs/api.md, "Consent receipts").

export const ConsentIdParams = Type.Object({ consent_id: Type.String({ description: 'The consent record id (UUID)' }) });

export const ConsentReceiptAnswer = Type.Object(
  {
    consent_id: Type.String({ format: 'uuid' }),
    receipt: Type.String({ description: 'The compact JWS (EdDSA over Ed25519): header.payload.signature, base64url. This is the receipt; verify it with the JWKS.' }),
    kid: Type.String({ description: 'The signing key it names (its JWS header `kid`)' }),
    jwks_uri: Type.String({ description: "The organization's public keys: /.well-known/jwks.json on its host" }),
    document: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'The signed document, decoded for reading (ISO/IEC TS 27560-shaped: version, schema, record_id, previous_record_id, controller, principal, collection_point, notice {version, sha256}, purposes [{id, name, required, granted, state}], action, time, channel, request_id, event_id; a late receipt, signed after the record for a record older than receipts, also issued_late: true and issued_at, its signing time, while time stays the record\'s). Trust only what the JWS verifies.',
    }),
  },
  { title: 'ConsentReceipt' },
);
