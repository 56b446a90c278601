// The answers the truConsent SDKs read, built from the contract's records (docs/sdk-calls.md lists every
// field each SDK reads). Ids are always JSON strings (Flutter drops a whole list on one number), times
// ISO 8601 strings, dropdown values the SDKs' own (mapping.ts).
import { Type } from 'typebox';
import type { CollectionPointRow, PurposeRow } from '../collection-points/index.js';
import type { GrievanceRow, MessageRow } from '../grievances/index.js';
import type { NomineeRow } from '../nominees/index.js';
import { categoryToSdk, relationshipToSdk } from './mapping.js';

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** Open objects: the SDKs read what they know and ignore the rest, so the OpenAPI names the main fields only. */
const Open = (title: string, properties: Parameters<typeof Type.Object>[0], description?: string) =>
  Type.Object(properties, { title, additionalProperties: true, ...(description ? { description } : {}) });

export const SdkPurpose = Open('SdkPurpose', {
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  is_mandatory: Type.Boolean(),
  is_legitimate: Type.Boolean(),
  purpose_type: Type.String(),
  expiry_period: Type.String(),
  version: Type.String(),
});

export const SdkBanner = Open(
  'SdkBanner',
  {
    banner_id: Type.String({ description: "The collection point's display_id" }),
    collection_point: Type.String({ description: 'The collection point id to submit consent to' }),
    collectionPoint: Type.String(),
    version: Type.String({ description: 'The notice version, as a string' }),
    name: Type.String({ description: 'The collection point name (also sent as `title`)' }),
    description: Type.String({ description: 'The notice' }),
    purposes: Type.Array(SdkPurpose),
  },
  'A collection point with its notice and purposes, in the shape both SDKs read (they add camelCase aliases themselves).',
);

export function bannerOf(point: CollectionPointRow, asset: { id: string; name: string; kind: string }, org: { name: string }) {
  const version = String(point.notice_version);
  return {
    banner_id: point.display_id,
    id: point.id,
    display_id: point.display_id,
    collection_point: point.id,
    collectionPoint: point.id,
    version,
    title: point.name,
    name: point.name,
    description: point.notice,
    notice: point.notice,
    expiry_type: 'active',
    consent_type: 'standard_consent',
    asset: { id: asset.id, name: asset.name, asset_type: asset.kind },
    organization: { name: org.name },
    organization_name: org.name,
    data_elements: [],
    purposes: point.purposes.map((p) => purposeOf(p, version)),
  };
}

function purposeOf(p: PurposeRow, version: string) {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    is_mandatory: p.required,
    is_legitimate: false,
    purpose_type: 'consent',
    expiry_period: '',
    frequency: 'recurring',
    version,
    status: 'active',
    data_elements: [],
    processing_activities: [],
    legal_entities: [],
    tools: [],
  };
}

export const SdkNominee = Open('SdkNominee', {
  id: Type.String(),
  nominee_name: Type.String(),
  relationship: Type.String({ description: 'Spouse, Parent, Child, Sibling or Other (the SDK dropdown)' }),
  nominee_email: Type.String(),
  nominee_mobile: Type.String(),
  purpose_of_appointment: Type.Union([Type.String(), Type.Null()]),
  user_id: Type.String(),
  client_user_id: Type.String(),
  status: Type.String(),
});

export function nomineeOf(n: NomineeRow) {
  return {
    id: n.id,
    nominee_name: n.nominee_name,
    relationship: relationshipToSdk(n.relationship),
    nominee_email: n.nominee_email,
    nominee_mobile: n.nominee_mobile,
    purpose_of_appointment: n.purpose_of_appointment,
    user_id: n.client_user_id,
    client_user_id: n.client_user_id,
    status: n.status,
    verified_at: iso(n.verified_at),
    created_at: iso(n.created_at),
    updated_at: iso(n.updated_at),
  };
}

export const SdkGrievanceTicket = Open('SdkGrievanceTicket', {
  id: Type.String(),
  ticket_id: Type.String(),
  subject: Type.String(),
  category: Type.String({ description: 'Privacy Concern, Data Access, Other (the SDK dropdown), or the category in words' }),
  description: Type.String(),
  status: Type.String(),
  created_at: Type.String(),
  client_user_id: Type.String(),
});

export function ticketOf(g: GrievanceRow) {
  return {
    id: g.id,
    ticket_id: g.ticket_id,
    subject: g.subject,
    category: categoryToSdk(g.category),
    description: g.description,
    status: g.status,
    attachment_url: g.attachment_url,
    client_user_id: g.client_user_id,
    user_id: g.client_user_id,
    created_at: iso(g.created_at),
    updated_at: iso(g.updated_at),
  };
}

export const SdkGrievanceMessage = Open('SdkGrievanceMessage', {
  id: Type.String(),
  sender: Type.String({ description: 'user (the person), agent (the organization) or system (a status change)' }),
  message: Type.String(),
  created_at: Type.String(),
  attachment_url: Type.Union([Type.String(), Type.Null()]),
});

/** A message on a ticket as both SDKs read it (`id` or `message_id`, `attachment_name` beside the URL). */
export function messageOf(m: MessageRow) {
  return {
    id: m.id,
    message_id: m.id,
    sender: m.sender,
    message: m.message,
    created_at: iso(m.created_at),
    attachment_url: m.attachment_url,
    // The file name the SDK shows: the URL's last path segment.
    attachment_name: m.attachment_url?.split(/[?#]/)[0]?.replace(/\/+$/, '').split('/').pop() || null,
  };
}

export interface MyConsent {
  collection_point: { id: string; display_id: string; name: string; notice: string; notice_version: number };
  consent_action: string;
  purposes: { id: string; name: string; required: boolean; granted: boolean }[];
  given_at: Date | string;
  consent_id: string;
}

export const SdkConsentGroup = Open('SdkConsentGroup', {
  collection_point: Type.String(),
  name: Type.String({ description: 'The collection point name (also sent as `title`)' }),
  purposes: Type.Array(Open('SdkConsentPurpose', { id: Type.String(), name: Type.String(), consented: Type.String(), is_mandatory: Type.Boolean() })),
});

/** One collection point where the person has a consent on record, with each purpose's current choice. */
export function consentGroupOf(c: MyConsent) {
  return {
    collection_point: c.collection_point.id,
    id: c.collection_point.id,
    display_id: c.collection_point.display_id,
    title: c.collection_point.name,
    name: c.collection_point.name,
    notice: c.collection_point.notice,
    notice_version: c.collection_point.notice_version,
    consent_action: c.consent_action,
    given_at: iso(c.given_at),
    shown_to_principal: true,
    data_elements: [],
    purposes: c.purposes.map((p) => ({
      id: p.id,
      name: p.name,
      title: p.name,
      description: '',
      expiry_period: '',
      is_mandatory: p.required,
      is_legitimate: false,
      purpose_type: 'consent',
      status: 'active',
      consented: p.granted ? 'accepted' : 'declined',
      data_elements: [],
      processing_activities: [],
    })),
  };
}

export const SdkUserConsentStatus = Open('SdkUserConsentStatus', {
  collectionPoints: Type.Array(Open('SdkCollectionPointStatus', { collection_point_id: Type.String(), latest_consent: Open('SdkLatestConsent', {}) })),
});

export function consentStatusOf(userId: string, mine: MyConsent[]) {
  return {
    userId,
    user_id: userId,
    collectionPoints: mine.map((c) => ({
      collection_point_id: c.collection_point.id,
      collectionPointId: c.collection_point.id,
      name: c.collection_point.name,
      latest_consent: {
        consent_id: c.consent_id,
        action: c.consent_action,
        timestamp: iso(c.given_at),
        purpose_consents: c.purposes.map((p) => ({
          purpose_id: p.id,
          id: p.id,
          name: p.name,
          status: p.granted ? 'accepted' : 'declined',
          consented: p.granted ? 'accepted' : 'declined',
        })),
      },
    })),
  };
}

export const SdkOk = Open('SdkOk', { success: Type.Boolean(), message: Type.String() });
