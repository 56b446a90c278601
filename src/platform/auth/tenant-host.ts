// Which organization a request addresses: the first label of the Host under BASE_DOMAIN, looked up
// through a short-lived cache so a warm request makes no database round trip.
import type { Database } from '../db/types.js';
import type { Clock } from '../clock.js';

export interface Organization {
  id: string;
  slug: string;
  name: string;
}

/** The organization slug a Host names, or null for the bare base domain and foreign hosts. */
export function slugFromHost(host: string | undefined, baseDomain: string): string | null {
  if (!host) return null;
  let name = host.trim().toLowerCase();
  if (name.startsWith('[')) return null; // an IPv6 literal names no organization
  const colon = name.lastIndexOf(':');
  if (colon !== -1) name = name.slice(0, colon);
  if (name.endsWith('.')) name = name.slice(0, -1);
  const suffix = '.' + baseDomain;
  if (!name.endsWith(suffix)) return null;
  const label = name.slice(0, -suffix.length);
  return /^[a-z0-9-]{1,63}$/.test(label) ? label : null;
}

const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

export interface OrganizationDirectory {
  bySlug(slug: string): Promise<Organization | null>;
  forget(slug: string): void;
}

export function createOrganizationDirectory(db: Database, clock: Clock): OrganizationDirectory {
  const cache = new Map<string, { org: Organization; at: number }>();
  return {
    async bySlug(slug) {
      const now = clock.now().getTime();
      const hit = cache.get(slug);
      if (hit && now - hit.at < TTL_MS) return hit.org;
      const rows = await db.system.query<Organization>('select id, slug, name from organizations where slug = $1', [slug]);
      const org = rows[0] ?? null;
      // Unknown slugs are not remembered: an organization created a moment ago must work at once.
      if (org) {
        if (cache.size >= MAX_ENTRIES) cache.clear();
        cache.set(slug, { org, at: now });
      } else cache.delete(slug);
      return org;
    },
    forget(slug) {
      cache.delete(slug);
    },
  };
}
