// The API's value lists, as the dashboard offers them (the API refuses anything else with a 400).
export const GRIEVANCE_STATUSES = ['open', 'in_progress', 'on_hold', 'resolved', 'rejected', 'closed'] as const;
export const GRIEVANCE_CATEGORIES = ['data_access', 'rectification', 'erasure', 'consent_withdrawal', 'nomination', 'data_portability', 'objection', 'complaint', 'other'] as const;
export const NOMINEE_STATUSES = ['pending', 'verified', 'rejected'] as const;
export const RELATIONSHIPS = ['spouse', 'parent', 'child', 'sibling', 'legal_guardian', 'power_of_attorney', 'other'] as const;
export const ROLES = ['owner', 'admin', 'member'] as const;
export const SCOPES = ['admin', 'grievances', 'nominees', 'consent', 'sdk', 'fulfilment'] as const;
export const ASSET_KINDS = ['website', 'mobile_app', 'call_center', 'offline', 'other'] as const;
export const AUDIT_ACTIONS = [
  'grievance.created',
  'grievance.updated',
  'grievance.status_changed',
  'grievance.message_added',
  'nominee.created',
  'nominee.updated',
  'nominee.deleted',
  'nominee.verified',
  'nominee.rejected',
  'nominee.signed_in',
  'nominee.token_issued',
  'asset.created',
  'asset.updated',
  'collection_point.created',
  'collection_point.updated',
  'consent_link.created',
  'consent_link.regenerated',
  'consent.recorded',
  'consent.withdrawn',
  'api_key.created',
  'organization.updated',
  'organization.exported',
  'organization.contact_person_set',
  'organization.rights_center_settings_updated',
  'api_key.revoked',
  'member.added',
  'member.role_changed',
  'member.removed',
  'webhook.created',
  'webhook.updated',
  'webhook.secret_rotated',
  'webhook.deleted',
  'webhook.delivery_retried',
  'signing_key.rotated',
  'data_principal.contact_created',
  'data_principal.contact_updated',
  'data_principal.token_issued',
  'data_principal.signed_in',
  'data_category.created',
  'data_category.updated',
  'data_category.deleted',
  'system.created',
  'system.updated',
  'system.key_created',
  'fulfilment.tasks_created',
  'fulfilment.tasks_claimed',
  'fulfilment.task_heartbeat',
  'fulfilment.task_completed',
  'fulfilment.task_failed',
  'fulfilment.task_retried',
  'fulfilment.part_attached',
  'fulfilment.package_compiled',
  'fulfilment.package_downloaded',
  'fulfilment.settings_changed',
  'fulfilment.erasure_scheduled',
] as const;
export const TASK_STATUSES = ['queued', 'leased', 'done', 'failed'] as const;
export const SYSTEM_STATUSES = ['active', 'archived'] as const;
export const PAGE_SIZES = [25, 50, 100, 200] as const;
