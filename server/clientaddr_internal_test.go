package server

import (
	"net/http"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

// clientAddr against the headers a proxy chain writes. The trusted
// networks are 10.0.0.0/8 and 2001:db8:ffff::/48; 198.51.100.7 and
// 2001:db8:1::1 are clients, 203.0.113.9 an untrusted hop further out.
func TestClientAddr(t *testing.T) {
	tp, err := newTrustedProxies([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, peer, xff, fwd, want string
	}{
		{"no headers", "10.0.0.1:5000", "", "", "10.0.0.1:5000"},
		{"untrusted peer's XFF is ignored", "198.51.100.7:5000", "192.0.2.1", "", "198.51.100.7:5000"},
		{"untrusted peer's Forwarded is ignored", "198.51.100.7:5000", "", "for=192.0.2.1", "198.51.100.7:5000"},
		{"one proxy", "10.0.0.1:5000", "198.51.100.7", "", "198.51.100.7"},
		{"client's own XFF left of the proxy's", "10.0.0.1:5000", "192.0.2.1, 192.0.2.2, 198.51.100.7", "", "198.51.100.7"},
		{"client claims a trusted address", "10.0.0.1:5000", "10.9.9.9, 198.51.100.7", "", "198.51.100.7"},
		{"two trusted proxies", "10.0.0.1:5000", "198.51.100.7, 10.0.0.2", "", "198.51.100.7"},
		{"right-most untrusted, not left-most", "10.0.0.1:5000", "198.51.100.7, 203.0.113.9, 10.0.0.2", "", "203.0.113.9"},
		{"all trusted: the left-most", "10.0.0.1:5000", "10.0.0.3, 10.0.0.2", "", "10.0.0.3"},
		{"fields repeated", "10.0.0.1:5000", "192.0.2.1\n198.51.100.7, 10.0.0.2", "", "198.51.100.7"},
		{"empty elements", "10.0.0.1:5000", " , 198.51.100.7,,", "", "198.51.100.7"},
		{"XFF with ports", "10.0.0.1:5000", "198.51.100.7:4711, [2001:db8:ffff::2]:80", "", "198.51.100.7"},
		{"XFF IPv6", "10.0.0.1:5000", "2001:db8:1::1", "", "2001:db8:1::1"},
		{"IPv4-mapped peer and hop", "[::ffff:10.0.0.1]:5000", "::ffff:198.51.100.7", "", "198.51.100.7"},
		{"IPv6 proxy", "[2001:db8:ffff::1]:5000", "198.51.100.7", "", "198.51.100.7"},
		{"unparsable right of the client stops at the proxy", "10.0.0.1:5000", "198.51.100.7, 10.0.0.2, garbage", "", "10.0.0.1"},
		{"unknown from a second proxy: that proxy", "10.0.0.1:5000", "198.51.100.7, unknown, 10.0.0.2", "", "10.0.0.2"},
		{"unparsable left of the client is never read", "10.0.0.1:5000", "garbage, 198.51.100.7", "", "198.51.100.7"},
		{"Forwarded", "10.0.0.1:5000", "", "for=198.51.100.7;proto=https", "198.51.100.7"},
		{"Forwarded IPv6 quoted with port", "10.0.0.1:5000", "", `for="[2001:db8:1::1]:4711"`, "2001:db8:1::1"},
		{"Forwarded chain", "10.0.0.1:5000", "", `for=192.0.2.1, for=198.51.100.7;by=10.0.0.1, For="10.0.0.2"`, "198.51.100.7"},
		{"Forwarded fields repeated", "10.0.0.1:5000", "", "for=192.0.2.1\nfor=198.51.100.7", "198.51.100.7"},
		{"Forwarded quoted escape", "10.0.0.1:5000", "", `for="198.51.100\.7"`, "198.51.100.7"},
		{"Forwarded obfuscated", "10.0.0.1:5000", "", "for=_hidden, for=10.0.0.2", "10.0.0.2"},
		{"Forwarded unknown from the peer", "10.0.0.1:5000", "", "for=unknown", "10.0.0.1"},
		{"Forwarded element without for", "10.0.0.1:5000", "", "proto=https", "10.0.0.1"},
		{"Forwarded unterminated quote", "10.0.0.1:5000", "", `for="198.51.100.7, for=203.0.113.9`, "10.0.0.1:5000"},
		{"Forwarded pair repeated", "10.0.0.1:5000", "", "for=192.0.2.1;for=198.51.100.7", "10.0.0.1:5000"},
		{"Forwarded junk", "10.0.0.1:5000", "", "for=198.51.100.7 junk", "10.0.0.1:5000"},
		{"both agree", "10.0.0.1:5000", "198.51.100.7", "for=198.51.100.7", "198.51.100.7"},
		{"both disagree: neither", "10.0.0.1:5000", "198.51.100.7", "for=192.0.2.1", "10.0.0.1:5000"},
		{"peer is not an address", "@", "198.51.100.7", "", "@"},
	} {
		r := &http.Request{RemoteAddr: tc.peer, Header: http.Header{}}
		for _, v := range splitLines(tc.xff) {
			r.Header.Add("X-Forwarded-For", v)
		}
		for _, v := range splitLines(tc.fwd) {
			r.Header.Add("Forwarded", v)
		}
		if got := tp.clientAddr(r); got != tc.want {
			t.Errorf("%s: clientAddr = %q, want %q", tc.name, got, tc.want)
		}
	}
	// With no trusted proxies nothing is read, whatever the peer.
	r := &http.Request{RemoteAddr: "10.0.0.1:5000", Header: http.Header{"X-Forwarded-For": {"198.51.100.7"}}}
	if got := trustedProxies(nil).clientAddr(r); got != "10.0.0.1:5000" {
		t.Errorf("no trusted proxies: %q", got)
	}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestForwardedFors(t *testing.T) {
	got, ok := forwardedFors([]string{`for=a;proto=http;by="x,y", ;, proto=https, FOR="[::1]:1";host="a\"b"`})
	if want := []string{"a", "", "", "[::1]:1"}; !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("forwardedFors = %q %v, want %q", got, ok, want)
	}
	for _, bad := range []string{`for`, `for=`, `=x`, `for="x`, `for="x\`, `for=x y`, `for=x;FOR=y`, `f@r=x`} {
		if _, ok := forwardedFors([]string{bad}); ok {
			t.Errorf("forwardedFors(%q) parsed", bad)
		}
	}
}

func TestNewTrustedProxies(t *testing.T) {
	for _, bad := range []netip.Prefix{{}, netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0"), netip.MustParsePrefix("::ffff:0.0.0.0/96")} {
		if _, err := newTrustedProxies([]netip.Prefix{bad}); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	tp, err := newTrustedProxies([]netip.Prefix{netip.MustParsePrefix("10.1.2.3/8"), netip.MustParsePrefix("::ffff:192.0.2.0/120")})
	if err != nil {
		t.Fatal(err)
	}
	for _, ip := range []string{"10.200.0.1", "192.0.2.77"} {
		if !tp.trusts(netip.MustParseAddr(ip)) {
			t.Errorf("%s not trusted by %v", ip, tp)
		}
	}
	if tp.trusts(netip.MustParseAddr("192.0.3.1")) {
		t.Errorf("192.0.3.1 trusted by %v", tp)
	}
}

func TestParseTrustedProxies(t *testing.T) {
	got, err := ParseTrustedProxies([]string{" 10.0.0.0/8", "192.0.2.7", "2001:db8::1", "", "fd00::/8"})
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("2001:db8::1/128"), netip.MustParsePrefix("fd00::/8")}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseTrustedProxies = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"proxy.example", "10.0.0.0/33", "0.0.0.0/0", "::/0", "10.0.0.1:80"} {
		if _, err := ParseTrustedProxies([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The address worked out is keyed as a peer's is: an IPv6 client behind a
// proxy is charged to its /64.
func TestClientAddrIsKeyedByPrefix(t *testing.T) {
	tp := trustedProxies{netip.MustParsePrefix("10.0.0.0/8")}
	r := &http.Request{RemoteAddr: "10.0.0.1:5000", Header: http.Header{"Forwarded": {`for="[2001:db8:1:2::77]:4711"`}}}
	if got := callerKey(tp.clientAddr(r), DefaultIPv6Prefix); got != "2001:db8:1:2::/64" {
		t.Fatalf("callerKey = %q, want 2001:db8:1:2::/64", got)
	}
}

// Whatever a proxy chain sends, clientAddr answers the peer or an address,
// never panics, and from an untrusted peer reads nothing.
func FuzzClientAddr(f *testing.F) {
	f.Add("10.0.0.1:1", "198.51.100.7, 10.0.0.2", `for="[2001:db8::1]:80";proto=https, for=_x`)
	f.Add("192.0.2.1:1", "unknown", `for="\`)
	tp := trustedProxies{netip.MustParsePrefix("10.0.0.0/8")}
	f.Fuzz(func(t *testing.T, peer, xff, fwd string) {
		r := &http.Request{RemoteAddr: peer, Header: http.Header{"X-Forwarded-For": {xff}, "Forwarded": {fwd}}}
		got := tp.clientAddr(r)
		if got == peer {
			return
		}
		if _, err := netip.ParseAddr(got); err != nil {
			t.Fatalf("clientAddr(%q, %q, %q) = %q: neither the peer nor an address", peer, xff, fwd, got)
		}
		if ap, err := netip.ParseAddrPort(peer); err != nil || !tp.trusts(ap.Addr().Unmap()) {
			t.Fatalf("clientAddr(%q, ...) = %q from an untrusted peer", peer, got)
		}
	})
}
