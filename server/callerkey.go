package server

import (
	"fmt"
	"net/netip"
)

// DefaultIPv6Prefix is how many leading bits of an IPv6 peer name its
// caller for rate limits: one host is commonly given a whole /64, so
// counting each address apart would give it a budget per address.
const DefaultIPv6Prefix = 64

// minIPv6Prefix bounds Limits.IPv6Prefix from below: a shorter prefix
// would put whole providers' customers behind one budget.
const minIPv6Prefix = 32

// callerKey is what a peer address (host:port, as in RemoteAddr) is
// charged to: an IPv4 address (IPv4-mapped IPv6 included) as itself, an
// IPv6 address as its network of ipv6Prefix bits ("2001:db8:1:2::/64").
// Anything unparsable is its own key.
func callerKey(peer string, ipv6Prefix int) string {
	host := hostOf(peer)
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	p, err := ip.Prefix(ipv6Prefix)
	if err != nil {
		return host
	}
	return p.String()
}

func checkIPv6Prefix(bits int) error {
	if bits < minIPv6Prefix || bits > 128 {
		return fmt.Errorf("server: the IPv6 prefix for rate limits must be between %d and 128 bits, not %d", minIPv6Prefix, bits)
	}
	return nil
}
