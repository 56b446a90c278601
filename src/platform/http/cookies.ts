// Reading one cookie from a request and writing a Set-Cookie value: the two browser features (consent
// page, dashboard sessions) need nothing more, so no cookie plugin.
import type { FastifyRequest } from 'fastify';

/** The value of cookie `name` when it matches `pattern`; anything else counts as no cookie. */
export function readCookie(request: FastifyRequest, name: string, pattern: RegExp): string | null {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    if (pattern.test(value)) return value;
  }
  return null;
}

export interface CookieOptions {
  path: string;
  /** Seconds; 0 deletes the cookie. */
  maxAge: number;
  httpOnly: boolean;
  secure: boolean;
  /** Default Strict. Lax lets a top-level link from elsewhere (an SMS, an app) arrive signed in. */
  sameSite?: 'Strict' | 'Lax';
}

/** A host-only cookie (no Domain attribute: another subdomain never receives it), SameSite=Strict unless told. */
export function serializeCookie(name: string, value: string, o: CookieOptions): string {
  return `${name}=${value}; Path=${o.path}${o.httpOnly ? '; HttpOnly' : ''}; SameSite=${o.sameSite ?? 'Strict'}; Max-Age=${o.maxAge}${o.secure ? '; Secure' : ''}`;
}
