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

/**
 * What a Host addresses: an organization's host (`<slug>.<BASE_DOMAIN>`; `slug` null when the label is
 * not a possible slug), or the bare host: the base domain itself, and any other name or address that
 * reaches the server (`127.0.0.1:3000`, `[::1]:3000`, a load balancer's name). On the bare host a
 * credential selects its own organization (contract §9); on an organization's host the host does.
 */
export type HostAddress = { kind: 'organization'; slug: string | null } | { kind: 'bare' };

export function addressOf(host: string | undefined, baseDomain: string): HostAddress {
  if (!host) return { kind: 'bare' };
  let name = host.trim().toLowerCase();
  if (name.startsWith('[')) return { kind: 'bare' };
  const colon = name.lastIndexOf(':');
  if (colon !== -1) name = name.slice(0, colon);
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (!name.endsWith('.' + baseDomain)) return { kind: 'bare' };
  return { kind: 'organization', slug: slugFromHost(host, baseDomain) };
}

const TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

export interface OrganizationDirectory {
  bySlug(slug: string): Promise<Organization | null>;
  /** The organization a credential belongs to (bare host): by its id. */
  byId(id: string): Promise<Organization | null>;
  forget(slug: string): void;
}

export function createOrganizationDirectory(db: Database, clock: Clock): OrganizationDirectory {
  const cache = new Map<string, { org: Organization; at: number }>();
  const byId = new Map<string, { org: Organization; at: number }>();
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
    async byId(id) {
      const now = clock.now().getTime();
      const hit = byId.get(id);
      if (hit && now - hit.at < TTL_MS) return hit.org;
      const rows = await db.system.query<Organization>('select id, slug, name from organizations where id = $1', [id]);
      const org = rows[0] ?? null;
      if (org) {
        if (byId.size >= MAX_ENTRIES) byId.clear();
        byId.set(id, { org, at: now });
      } else byId.delete(id);
      return org;
    },
    forget(slug) {
      cache.delete(slug);
      for (const [id, hit] of byId) if (hit.org.slug === slug) byId.delete(id);
    },
  };
}
