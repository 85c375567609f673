import { lookup } from 'node:dns/promises';
import net, { type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * SSRF protection for webhook targets. A target must resolve only to public
 * unicast addresses: loopback, private (RFC 1918, unique-local), link-local
 * (which holds the cloud metadata address 169.254.169.254), carrier-grade
 * NAT (Alibaba's metadata 100.100.100.200), multicast, broadcast,
 * unspecified, documentation, benchmarking and other reserved ranges are
 * refused, in IPv4 and IPv6, with IPv4-mapped IPv6 judged as the IPv4
 * address it carries. IPv6 must be global unicast (2000::/3), which also
 * rules out the IPv4-compatible ::a.b.c.d form; NAT64, 6to4 and Teredo are
 * refused because they tunnel to addresses we cannot see.
 *
 * The check runs when a subscription is created and again before every
 * attempt. The connection is then made to the very address that was checked
 * (`pinnedLookup`), so a DNS answer that changes between check and connect
 * (DNS rebinding) cannot reach an internal address.
 */

export class ForbiddenTargetError extends Error {
  constructor(
    message: string,
    readonly code: 'forbidden_address' | 'unresolvable_host',
  ) {
    super(message);
    this.name = 'ForbiddenTargetError';
  }
}

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parse('2000::');

const RANGE_LABELS: Record<string, string> = {
  loopback: 'loopback',
  private: 'private',
  uniqueLocal: 'private (unique-local)',
  linkLocal: 'link-local (cloud metadata)',
  carrierGradeNat: 'carrier-grade NAT',
  multicast: 'multicast',
  broadcast: 'broadcast',
  unspecified: 'unspecified',
};

/** Why an address may not be a webhook target, or null when it may. */
export function forbiddenAddressReason(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  const label = `${RANGE_LABELS[range] ?? 'reserved'} address`;
  if (parsed.kind() === 'ipv6' && !(parsed as ipaddr.IPv6).match(GLOBAL_UNICAST_V6, 3)) return label;
  return range === 'unicast' ? null : label;
}

export type ResolvedTarget = { address: string; family: 4 | 6 };

/** URL hostnames keep IPv6 literals in brackets. */
export function bareHostname(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/**
 * Resolves a hostname and checks every address it resolves to (a name with
 * one internal address among public ones is refused). Returns the first
 * address, the one to connect to.
 */
export async function resolveTarget(hostname: string, options: { allowPrivate: boolean }): Promise<ResolvedTarget> {
  const host = bareHostname(hostname);
  const family = net.isIP(host);
  let addresses: Array<{ address: string; family: number }>;
  if (family) {
    addresses = [{ address: host, family }];
  } else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch {
      throw new ForbiddenTargetError(`The host ${host} does not resolve.`, 'unresolvable_host');
    }
    if (addresses.length === 0) throw new ForbiddenTargetError(`The host ${host} does not resolve.`, 'unresolvable_host');
  }
  if (!options.allowPrivate) {
    for (const { address } of addresses) {
      const reason = forbiddenAddressReason(address);
      if (reason) {
        // The address itself is not named: that would turn webhooks into a probe of internal DNS.
        throw new ForbiddenTargetError(
          `Webhook targets must be public: ${host === address ? `${address} is` : `${host} resolves to`} a ${reason}.`,
          'forbidden_address',
        );
      }
    }
  }
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** A `lookup` for http.request that answers only the address already checked. */
export function pinnedLookup(target: ResolvedTarget): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}
