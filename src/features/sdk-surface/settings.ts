// Rights Center settings (contract §8): what the SDKs' Rights Center widget reads before anything else
// (colours, which sections it shows, grievance mode, access mode sso / non_sso). One record per
// organization, stored whole as JSON; fields never set read as the SDKs' own defaults. Changed through
// the organization's API (and the dashboard, which calls it); read by the SDK surface with an `sdk` key.
import { Type, type Static } from 'typebox';
import type { Database } from '../../platform/db/types.js';
import { tenantReads, withTenant, type TenantTx } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import type { TenantContext } from '../../platform/auth/access.js';
import { recordAudit } from '../audit/index.js';

const Colour = (description: string) =>
  Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', description, examples: ['#65a30d'], 'x-message': 'must be a colour #RRGGBB' });
const Title = (maxLength = 255) => Type.String({ maxLength });

const fields = {
  access_mode: Type.Unsafe<'sso' | 'non_sso'>({
    type: 'string',
    enum: ['sso', 'non_sso'],
    description: 'sso: the app passes its signed-in user (and their token); non_sso: the widget signs the person in with a one-time code',
  }),
  background_color: Colour('Page background'),
  primary_text_color: Colour('Main text'),
  secondary_text_color: Colour('Secondary text and borders'),
  button_color: Colour('Buttons and the active tab'),
  button_text_color: Colour('Text on buttons'),
  font_family: Type.String({ minLength: 1, maxLength: 100 }),
  show_consents_section: Type.Boolean(),
  show_rights_section: Type.Boolean(),
  show_nominees_section: Type.Boolean(),
  show_transparency_section: Type.Boolean(),
  show_dpo_section: Type.Boolean(),
  show_grievance_section: Type.Boolean(),
  grievance_mode: Type.Unsafe<'truconsent' | 'external'>({
    type: 'string',
    enum: ['truconsent', 'external'],
    description: 'truconsent: tickets are filed here; external: the widget links to grievance_external_url',
  }),
  grievance_external_url: Type.String({ maxLength: 2048, pattern: '^(https?://\\S+)?$', examples: ['https://example.com/grievances'], 'x-message': 'must be an http(s) URL or empty' }),
  consents_section_title: Title(),
  rights_section_title: Title(),
  nominees_section_title: Title(),
  transparency_description: Title(5000),
  dpo_qualifications_enabled: Type.Boolean(),
  dpo_responsibilities_enabled: Type.Boolean(),
  dpo_working_hours_enabled: Type.Boolean(),
  dpo_response_time_enabled: Type.Boolean(),
};

export const RightsCenterSettings = Type.Object(fields, { title: 'RightsCenterSettings' });
export type RightsCenterSettingsValue = Static<typeof RightsCenterSettings>;

export const RightsCenterSettingsPatch = Type.Object(
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Type.Optional(v)])) as { [K in keyof typeof fields]: ReturnType<typeof Type.Optional<(typeof fields)[K]>> },
  { additionalProperties: false, minProperties: 1, description: 'Any of the fields; those left out keep their value' },
);
export type RightsCenterSettingsPatchValue = Partial<RightsCenterSettingsValue>;

/** The SDKs' own defaults (both SDKs ship the same), so an organization that set nothing sees no change. */
export const DEFAULT_RIGHTS_CENTER_SETTINGS: RightsCenterSettingsValue = {
  access_mode: 'sso',
  background_color: '#020617',
  primary_text_color: '#e5e7eb',
  secondary_text_color: '#9ca3af',
  button_color: '#65a30d',
  button_text_color: '#0b1120',
  font_family: 'sans-serif',
  show_consents_section: true,
  show_rights_section: true,
  show_nominees_section: true,
  show_transparency_section: false,
  show_dpo_section: false,
  show_grievance_section: true,
  grievance_mode: 'truconsent',
  grievance_external_url: '',
  consents_section_title: 'Consents',
  rights_section_title: 'Your Data Rights',
  nominees_section_title: 'Nominees',
  transparency_description: '',
  dpo_qualifications_enabled: true,
  dpo_responsibilities_enabled: true,
  dpo_working_hours_enabled: true,
  dpo_response_time_enabled: true,
};

/** Stored values over the defaults, only known fields (a field dropped later never leaks out). */
function withDefaults(stored: unknown): RightsCenterSettingsValue {
  const s = (typeof stored === 'string' ? JSON.parse(stored) : stored) as Record<string, unknown> | null;
  const out: Record<string, unknown> = { ...DEFAULT_RIGHTS_CENTER_SETTINGS };
  if (s) for (const k of Object.keys(DEFAULT_RIGHTS_CENTER_SETTINGS)) if (s[k] !== undefined) out[k] = s[k];
  return out as RightsCenterSettingsValue;
}

async function read(tx: TenantTx, forUpdate = false): Promise<unknown> {
  const rows = await tx.query<{ settings: unknown }>(
    `select settings from rights_center_settings where org_id = $1::uuid${forUpdate ? ' for update' : ''}`,
    [tx.orgId],
  );
  return rows[0]?.settings ?? null;
}

export function createRightsCenterSettingsService({ db, clock }: { db: Database; clock: Clock }) {
  return {
    async get(ctx: Pick<TenantContext, 'orgId'>): Promise<RightsCenterSettingsValue> {
      return withDefaults(await read(tenantReads(db, ctx.orgId)));
    },

    /** Changes the given fields; the others keep their value. Audited with the names of the fields changed. */
    update(ctx: TenantContext, patch: RightsCenterSettingsPatchValue): Promise<RightsCenterSettingsValue> {
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const current = withDefaults(await read(tx, true));
        const next = { ...current, ...patch };
        await tx.query(
          `insert into rights_center_settings (org_id, settings, updated_at) values ($1::uuid, $2::text::jsonb, $3::timestamptz)
           on conflict (org_id) do update set settings = excluded.settings, updated_at = excluded.updated_at`,
          [tx.orgId, JSON.stringify(next), at],
        );
        const changed = Object.keys(patch).filter((k) => current[k as keyof RightsCenterSettingsValue] !== next[k as keyof RightsCenterSettingsValue]);
        await recordAudit(tx, ctx, at, { action: 'organization.rights_center_settings_updated', targetType: 'organization', targetId: ctx.orgId, details: { fields: changed } });
        return next;
      });
    },
  };
}

export type RightsCenterSettingsService = ReturnType<typeof createRightsCenterSettingsService>;
