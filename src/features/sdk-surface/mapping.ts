// The one place where the truConsent SDKs' values meet the contract's (contract §8), both ways. The
// SDKs send and show Title Case dropdown values (`Privacy Concern`, `Spouse`), `""` for a blank field,
// their own consent action names, and read ids as strings; the contract's endpoints stay strict and never
// see any of this. Whatever an SDK cannot show (a relationship its dropdown lacks) goes out as the
// dropdown's `Other`, and an unchanged `Other` coming back keeps what was stored.
import { AppError } from '../../platform/http/errors.js';
import { GRIEVANCE_CATEGORIES } from '../grievances/index.js';
import { RELATIONSHIPS } from '../nominees/index.js';

type Category = (typeof GRIEVANCE_CATEGORIES)[number];
type Relationship = (typeof RELATIONSHIPS)[number];

/** The SDKs' grievance dropdown (both SDKs: `Privacy Concern`, `Data Access`, `Other`), in and out. */
const CATEGORY_FROM_SDK: Record<string, Category> = {
  'privacy concern': 'complaint',
  'data access': 'data_access',
  other: 'other',
};
const CATEGORY_TO_SDK: Partial<Record<Category, string>> = { complaint: 'Privacy Concern', data_access: 'Data Access', other: 'Other' };

/** The SDKs' relationship dropdown (`Spouse`, `Parent`, `Child`, `Sibling`, `Other`). */
const RELATIONSHIP_TO_SDK: Record<Relationship, string> = {
  spouse: 'Spouse',
  parent: 'Parent',
  child: 'Child',
  sibling: 'Sibling',
  // Not in the SDKs' dropdown: the Flutter edit form breaks on a value it does not list.
  legal_guardian: 'Other',
  power_of_attorney: 'Other',
  other: 'Other',
};

const words = (v: string) => v.trim().toLowerCase().replace(/[\s_-]+/g, ' ');

function invalid(field: string, message: string): AppError {
  return new AppError('validation_failed', `Invalid request body: ${field} ${message}`, [{ field, message }]);
}

/** `""`, whitespace, null and absent are all "not set". */
export function blankToUndefined(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') return String(v);
  return v.trim() === '' ? undefined : v;
}

/** `Privacy Concern` → complaint, `Data Access` → data_access, `Other` → other; a contract value is taken as is. */
export function categoryFromSdk(v: unknown, field = 'category'): Category {
  const s = blankToUndefined(v);
  if (s === undefined) throw invalid(field, 'is required');
  const w = words(s);
  const mapped = CATEGORY_FROM_SDK[w] ?? GRIEVANCE_CATEGORIES.find((c) => c === w.replace(/ /g, '_'));
  if (!mapped) throw invalid(field, `must be one of: Privacy Concern, Data Access, Other (or ${GRIEVANCE_CATEGORIES.join(', ')})`);
  return mapped;
}

/** The SDK's own dropdown value where it has one; otherwise the category in words (`Erasure`, `Consent Withdrawal`). */
export function categoryToSdk(c: string): string {
  return CATEGORY_TO_SDK[c as Category] ?? c.split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');
}

/** `Spouse` → spouse, ...; `Other` while the stored value shows as `Other` keeps the stored value. */
export function relationshipFromSdk(v: unknown, current?: Relationship, field = 'relationship'): Relationship {
  const s = blankToUndefined(v);
  if (s === undefined) throw invalid(field, 'is required');
  const w = words(s).replace(/ /g, '_');
  const mapped = RELATIONSHIPS.find((r) => r === w);
  if (!mapped) throw invalid(field, 'must be one of: Spouse, Parent, Child, Sibling, Other');
  if (mapped === 'other' && current !== undefined && RELATIONSHIP_TO_SDK[current] === 'Other') return current;
  return mapped;
}

export function relationshipToSdk(r: string): string {
  return RELATIONSHIP_TO_SDK[r as Relationship] ?? 'Other';
}

/** A purpose choice as either SDK sends it: accepted (or true, approved, yes) grants; anything else does not. */
export function grantedFromSdk(consented: unknown): boolean {
  if (consented === true) return true;
  if (typeof consented !== 'string') return false;
  return ['accepted', 'approved', 'yes', 'true', 'granted'].includes(consented.trim().toLowerCase());
}

/**
 * The banner's action as each SDK names it (React Native `partial_consent`, Flutter `Partially Consented`),
 * reduced to what it means here: a decision to record, or a close / notice acknowledgement that records
 * no consent (it is not a decision, and must not replace an earlier one).
 */
export type SdkAction = 'approved' | 'declined' | 'partial_consent' | 'revoked' | 'no_action' | 'notice_shown';
const ACTIONS: Record<string, SdkAction> = {
  approved: 'approved',
  declined: 'declined',
  partial_consent: 'partial_consent',
  partially_consented: 'partial_consent',
  partial: 'partial_consent',
  revoked: 'revoked',
  no_action: 'no_action',
  notice_shown: 'notice_shown',
};
export function actionFromSdk(v: unknown): SdkAction {
  const s = blankToUndefined(v);
  if (s === undefined) throw invalid('action', 'is required');
  const mapped = ACTIONS[words(s).replace(/ /g, '_')];
  if (!mapped) throw invalid('action', 'must be one of: approved, declined, partial_consent, revoked, no_action, notice_shown (either SDK\'s spelling)');
  return mapped;
}

/** `+91` and `98765 43210` → `+919876543210`; a phone that already has its `+` is kept. */
export function phoneFromSdk(phone: unknown, countryCode: unknown): string {
  const p = blankToUndefined(phone);
  if (p === undefined) throw invalid('phone', 'is required');
  const digits = p.replace(/[\s().-]/g, '');
  if (digits.startsWith('+')) return digits;
  const cc = blankToUndefined(countryCode)?.replace(/[\s-]/g, '');
  if (cc === undefined) return digits;
  return `${cc.startsWith('+') ? cc : `+${cc}`}${digits.replace(/^0+/, '')}`;
}
