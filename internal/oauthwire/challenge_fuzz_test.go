package oauthwire

import (
	"reflect"
	"strings"
	"testing"
)

// A fuzz target for what the client reads from servers it does not
// control. Seeds live in f.Add and in testdata/fuzz/FuzzWWWAuthenticate/.

// serializeChallenges writes challenges back as a header value, every
// parameter value quoted.
func serializeChallenges(cs []Challenge) string {
	quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	var parts []string
	for _, c := range cs {
		s := c.Scheme
		if c.Token68 != "" {
			s += " " + c.Token68
		}
		first := true
		for k, v := range c.Params {
			if first {
				s += " "
				first = false
			} else {
				s += ", "
			}
			s += k + `="` + quote.Replace(v) + `"`
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// FuzzWWWAuthenticate: the challenge parser never panics, yields no more
// than it was given, and what it parsed survives a round trip through
// serialisation.
func FuzzWWWAuthenticate(f *testing.F) {
	for _, s := range []string{
		`Bearer resource_metadata="https://a/.well-known/oauth-protected-resource", scope="mcp"`,
		`Basic realm="x", Bearer error="invalid_token", error_description="a \"quoted\" \\ thing"`,
		`Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple"`,
		`Bearer abc123==, Bearer x="unterminated`, `,,,`, `Bearer`, ``, `Bearer realm="a", REALM="b"`,
		`Negotiate a87421000492aa874209af8bc028, Bearer`, "Bearer x=\"\x00\xff\"", `Bearer x = "y" , y=z junk, z="q"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		cs := ParseWWWAuthenticate(v)
		size := 0
		for _, c := range cs {
			if c.Scheme == "" || c.Params == nil {
				t.Fatalf("challenge without scheme or params map from %q: %+v", v, c)
			}
			if c.Token68 != "" && len(c.Params) > 0 {
				t.Fatalf("both token68 and params from %q", v)
			}
			size += len(c.Scheme) + len(c.Token68)
			for k, val := range c.Params {
				size += len(k) + len(val)
			}
		}
		if size > len(v) {
			t.Fatalf("%d bytes of challenges from %d bytes of header", size, len(v))
		}
		back := serializeChallenges(cs)
		if again := ParseWWWAuthenticate(back); !reflect.DeepEqual(again, cs) && !(len(again) == 0 && len(cs) == 0) {
			t.Fatalf("round trip changed the challenges:\n in   %q\n got  %+v\n out  %q\n back %+v", v, cs, back, again)
		}
	})
}
