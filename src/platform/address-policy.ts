// Which addresses the outbound client may dial (outbound.ts): global unicast only, except inside the
// networks an operator allowed (ALLOWED_PRIVATE_NETWORKS).
import ipaddr from 'ipaddr.js';
import { rangeLabel } from './address-ranges.ts';
import { OutboundBlockedError } from './outbound-errors.ts';

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;

/** The address policy: only global unicast, except inside explicitly allowed networks. */
export function createAddressPolicy(allowedPrivateNetworks: string[]) {
  const allowed = allowedPrivateNetworks.map((cidr) => {
    try {
      return ipaddr.parseCIDR(cidr.trim());
    } catch {
      throw new Error(`ALLOWED_PRIVATE_NETWORKS: "${cidr}" is not a CIDR`);
    }
  });

  const isAllowedNetwork = (address: Parsed) =>
    allowed.some(([network, bits]) => address.kind() === network.kind() && address.match(network, bits));

  return {
    /** Throws OutboundBlockedError unless `literal` (an IP address) may be dialed. */
    check(literal: string): void {
      const bare = literal.startsWith('[') && literal.endsWith(']') ? literal.slice(1, -1) : literal;
      let parsed: Parsed;
      try {
        parsed = ipaddr.parse(bare.split('%')[0]!);
      } catch {
        throw new OutboundBlockedError('private_address', `"${literal}" is not an IP address`, { address: literal });
      }
      // ::ffff:a.b.c.d reaches a.b.c.d; judge it as the IPv4 address it is.
      if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
        parsed = (parsed as ipaddr.IPv6).toIPv4Address();
      }
      if (isAllowedNetwork(parsed)) return;
      const range = parsed.range();
      // Everything that is not plain global unicast is refused: loopback, private, link-local
      // (169.254.169.254 cloud metadata), CGNAT (100.100.100.200 metadata), unique-local
      // (fd00:ec2::254 metadata), multicast, unspecified, reserved, and the IPv6 ranges that embed
      // an IPv4 address (6to4, NAT64, Teredo), which could smuggle a private one.
      if (range !== 'unicast') {
        throw new OutboundBlockedError(
          'private_address',
          `The address ${parsed.toString()} (${rangeLabel(range)}) is not reachable from this service; allow its network in ALLOWED_PRIVATE_NETWORKS if intended`,
          { address: parsed.toString(), range },
        );
      }
    },
  };
}
