// Organization slugs (contract §6): 3-63 characters of a-z0-9-, a letter first, no trailing -, not reserved.
export const RESERVED_SLUGS = new Set([
  'www', 'api', 'admin', 'app', 'auth', 'static', 'assets', 'docs', 'status', 'mail', 'smtp', 'ftp',
  'dashboard', 'console', 'login', 'signup', 'help', 'support', 'blog', 'cdn', 'assent', 'health', 'localhost',
]);

/** Why a slug is refused, or null when it is acceptable. */
export function slugProblem(slug: string): string | null {
  if (slug.length < 3 || slug.length > 63) return 'must be 3-63 characters long';
  if (!/^[a-z]/.test(slug)) return 'must start with a lower-case letter';
  if (!/^[a-z0-9-]+$/.test(slug)) return 'may contain only a-z, 0-9 and -';
  if (slug.endsWith('-')) return 'must not end with -';
  if (RESERVED_SLUGS.has(slug)) return 'is reserved';
  return null;
}
