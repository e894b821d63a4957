package server

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// trustedProxies are the peers whose forwarding headers are believed
// (Config.TrustedProxies). Empty, the peer is always the client.
type trustedProxies []netip.Prefix

// ParseTrustedProxies reads networks of trusted proxies as CIDRs
// (10.0.0.0/8) or single addresses, as Config.TrustedProxies takes them.
func ParseTrustedProxies(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			ip, ipErr := netip.ParseAddr(s)
			if ipErr != nil {
				return nil, fmt.Errorf("%q is neither a CIDR (10.0.0.0/8) nor an IP address", s)
			}
			p = netip.PrefixFrom(ip, ip.BitLen())
		}
		if _, err := trustedNetwork(p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func newTrustedProxies(prefixes []netip.Prefix) (trustedProxies, error) {
	tp := make(trustedProxies, 0, len(prefixes))
	for _, p := range prefixes {
		n, err := trustedNetwork(p)
		if err != nil {
			return nil, fmt.Errorf("server: trusted proxies: %w", err)
		}
		tp = append(tp, n)
	}
	return tp, nil
}

// trustedNetwork is p as peers' addresses are compared with it: unmapped
// and masked.
func trustedNetwork(p netip.Prefix) (netip.Prefix, error) {
	if !p.IsValid() {
		return netip.Prefix{}, errors.New("not a valid CIDR")
	}
	n := netip.PrefixFrom(p.Addr().Unmap(), unmappedBits(p)).Masked()
	if n.Bits() == 0 {
		// Trusting every address lets any client name its own address
		// and so choose its own rate-limit budget.
		return netip.Prefix{}, fmt.Errorf("%s trusts every address, so any client could choose its own; name the proxies' own networks", p)
	}
	return n, nil
}

// unmappedBits keeps an IPv4-mapped prefix (::ffff:10.0.0.0/104) meaning
// the same once its address is unmapped, as peers' addresses are.
func unmappedBits(p netip.Prefix) int {
	if p.Addr().Is4In6() {
		return max(p.Bits()-96, 0)
	}
	return p.Bits()
}

func (tp trustedProxies) trusts(ip netip.Addr) bool {
	for _, p := range tp {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// clientAddr is the address a request is charged to: its peer
// (RemoteAddr, as given), or, when the peer is a trusted proxy, the client
// that proxy's forwarding headers name. Of X-Forwarded-For and Forwarded
// (RFC 7239), the hops are walked from the right, past trusted proxies; the
// first untrusted one is the client, and if all are trusted the left-most.
// A hop that names no address (for=unknown, an obfuscated for=_hidden, a
// missing for=) stops the walk at the nearest address known: the trusted
// hop to its right, or the peer. A Forwarded header that does not parse,
// or the two headers naming different clients (a proxy that sets one
// passes the other through from the client), names no one: the peer.
func (tp trustedProxies) clientAddr(r *http.Request) string {
	if len(tp) == 0 {
		return r.RemoteAddr
	}
	peerAddrPort, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	peer := peerAddrPort.Addr().Unmap().WithZone("")
	if !tp.trusts(peer) {
		return r.RemoteAddr
	}
	xff, fwd := r.Header.Values("X-Forwarded-For"), r.Header.Values("Forwarded")
	var fromXFF, fromFwd netip.Addr
	if len(xff) > 0 {
		fromXFF = tp.walk(forwardedForList(xff), peer)
	}
	if len(fwd) > 0 {
		hops, ok := forwardedFors(fwd)
		if !ok {
			return r.RemoteAddr
		}
		fromFwd = tp.walk(hops, peer)
	}
	switch {
	case fromXFF.IsValid() && fromFwd.IsValid() && fromXFF != fromFwd:
		return r.RemoteAddr
	case fromXFF.IsValid():
		return fromXFF.String()
	case fromFwd.IsValid():
		return fromFwd.String()
	}
	return r.RemoteAddr
}

// walk finds the client among hops (left-most first, as proxies append)
// received from the trusted peer.
func (tp trustedProxies) walk(hops []string, peer netip.Addr) netip.Addr {
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		ip, ok := parseHop(hops[i])
		if !ok {
			return client
		}
		client = ip
		if !tp.trusts(ip) {
			break
		}
	}
	return client
}

// parseHop reads one hop's address: 192.0.2.1, 2001:db8::1, with a port
// (192.0.2.1:80, [2001:db8::1]:80, even an obfuscated one) or in brackets.
func parseHop(hop string) (netip.Addr, bool) {
	hop = strings.TrimSpace(hop)
	if host, _, err := net.SplitHostPort(hop); err == nil {
		hop = host
	} else if len(hop) > 2 && hop[0] == '[' && hop[len(hop)-1] == ']' {
		hop = hop[1 : len(hop)-1]
	}
	ip, err := netip.ParseAddr(hop)
	if err != nil {
		return netip.Addr{}, false
	}
	return ip.Unmap().WithZone(""), true
}

// forwardedForList splits X-Forwarded-For fields into hops, dropping empty
// list elements (RFC 9110 §5.6.1).
func forwardedForList(fields []string) []string {
	var hops []string
	for _, f := range fields {
		for hop := range strings.SplitSeq(f, ",") {
			if hop = strings.TrimSpace(hop); hop != "" {
				hops = append(hops, hop)
			}
		}
	}
	return hops
}
