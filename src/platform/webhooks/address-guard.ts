// Where webhooks may be sent (contract §9): never to loopback, private, link-local, unspecified,
// multicast or other reserved addresses, nor to this service's own host names, unless the operator allows
// it (WEBHOOK_ALLOW_PRIVATE=1). Checked when an endpoint is saved, and again for every connection the
// worker opens (its DNS lookup is this guard), so a name that later resolves elsewhere is refused too.
import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['64:ff9b::', 96],
] as const) blocked.addSubnet(net, bits, 'ipv6');

/** True for an address a webhook must not reach without WEBHOOK_ALLOW_PRIVATE. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 6) {
    // IPv4-mapped (::ffff:10.0.0.1): judged as the IPv4 address it carries.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return blocked.check(mapped[1]!, 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return blocked.check(address, 'ipv4');
}

export interface AddressPolicy {
  /** WEBHOOK_ALLOW_PRIVATE=1: anything goes (local development, tests). */
  allowPrivate: boolean;
  /** BASE_DOMAIN and PUBLIC_URL's host: the service itself, and every organization's subdomain of it. */
  ownHosts: readonly string[];
}

export const REFUSED_ADDRESS = 'must not point at this service or at a loopback, private or link-local address (the operator can allow it with WEBHOOK_ALLOW_PRIVATE=1)';

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** Whether the host name is the service's own (or one of its organizations' subdomains). */
export function isOwnHost(hostname: string, policy: AddressPolicy): boolean {
  const host = stripBrackets(hostname.toLowerCase()).replace(/\.$/, '');
  return policy.ownHosts.some((own) => host === own || host.endsWith(`.${own}`));
}

function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => dnsLookup(host, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));
}

/** Why the URL cannot be a webhook endpoint, or null when it can. Resolves its host name. */
export async function urlProblem(raw: string, policy: AddressPolicy): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http(s) URL';
  if (url.username || url.password) return 'must not carry a user name or password';
  if (policy.allowPrivate) return null;
  if (isOwnHost(url.hostname, policy)) return REFUSED_ADDRESS;
  const host = stripBrackets(url.hostname);
  if (isIP(host)) return isForbiddenAddress(host) ? REFUSED_ADDRESS : null;
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(host);
  } catch {
    return 'must name a host that resolves';
  }
  if (addresses.length === 0 || addresses.some((a) => isForbiddenAddress(a.address))) return REFUSED_ADDRESS;
  return null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for node:http that refuses forbidden addresses (the connection-time half of the guard). */
export function guardedLookup(policy: AddressPolicy) {
  return (hostname: string, options: { all?: boolean; family?: number } | number, callback: LookupCallback): void => {
    const all = typeof options === 'object' && options.all === true;
    dnsLookup(hostname, { all: true }, (err, addresses) => {
      if (err) return callback(err, all ? [] : '', 0);
      const allowed = policy.allowPrivate ? addresses : addresses.filter((a) => !isForbiddenAddress(a.address));
      if (allowed.length === 0) {
        const refused = Object.assign(new Error(`${hostname} resolves to an address webhooks may not reach`), { code: 'EADDRNOTALLOWED' });
        return callback(refused, all ? [] : '', 0);
      }
      if (all) return callback(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}
