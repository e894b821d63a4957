package oauthwire_test

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

func TestParseWWWAuthenticate(t *testing.T) {
	type c = oauthwire.Challenge
	p := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name string
		in   string
		want []c
	}{
		{"bare scheme", "Bearer", []c{{Scheme: "Bearer", Params: p()}}},
		{"MCP challenge", `Bearer resource_metadata="https://h/.well-known/oauth-protected-resource", scope="mcp"`,
			[]c{{Scheme: "Bearer", Params: p("resource_metadata", "https://h/.well-known/oauth-protected-resource", "scope", "mcp")}}},
		{"token values and odd spacing", `Bearer   error=invalid_token ,scope = mcp`,
			[]c{{Scheme: "Bearer", Params: p("error", "invalid_token", "scope", "mcp")}}},
		{"comma inside quotes", `Bearer scope="a,b", realm="x"`,
			[]c{{Scheme: "Bearer", Params: p("scope", "a,b", "realm", "x")}}},
		{"escaped quote and backslash", `Bearer error_description="say \"hi\" \\ bye", realm=r`,
			[]c{{Scheme: "Bearer", Params: p("error_description", `say "hi" \ bye`, "realm", "r")}}},
		{"param names are case-insensitive", `Bearer Resource_Metadata="u", SCOPE="mcp"`,
			[]c{{Scheme: "Bearer", Params: p("resource_metadata", "u", "scope", "mcp")}}},
		{"RFC 7235 example with two challenges",
			`Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple"`,
			[]c{
				{Scheme: "Newauth", Params: p("realm", "apps", "type", "1", "title", `Login to "apps"`)},
				{Scheme: "Basic", Params: p("realm", "simple")},
			}},
		{"token68 then another challenge", `Negotiate abc+/def==, Bearer realm="x"`,
			[]c{{Scheme: "Negotiate", Token68: "abc+/def==", Params: p()}, {Scheme: "Bearer", Params: p("realm", "x")}}},
		{"bare schemes in a list", `Basic, Bearer`,
			[]c{{Scheme: "Basic", Params: p()}, {Scheme: "Bearer", Params: p()}}},
		{"duplicate param keeps the first", `Bearer scope="a", scope="b"`,
			[]c{{Scheme: "Bearer", Params: p("scope", "a")}}},
		{"unterminated quote takes the rest", `Bearer realm="abc`,
			[]c{{Scheme: "Bearer", Params: p("realm", "abc")}}},
		{"empty quoted value", `Bearer scope=""`, []c{{Scheme: "Bearer", Params: p("scope", "")}}},
		{"empty header", "", nil},
		{"garbage after a challenge is dropped", `Bearer realm="x", =oops`,
			[]c{{Scheme: "Bearer", Params: p("realm", "x")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := oauthwire.ParseWWWAuthenticate(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseWWWAuthenticate(%q)\n got %#v\nwant %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestBearerChallengeAcrossHeaders(t *testing.T) {
	h := http.Header{}
	h.Add("WWW-Authenticate", `Basic realm="old"`)
	h.Add("WWW-Authenticate", `bearer resource_metadata="https://h/prm"`)
	c, ok := oauthwire.BearerChallenge(h)
	if !ok || c.Params["resource_metadata"] != "https://h/prm" {
		t.Fatalf("BearerChallenge = %#v, %v", c, ok)
	}
	if _, ok := oauthwire.BearerChallenge(http.Header{"Www-Authenticate": {`Basic realm="x"`}}); ok {
		t.Error("found a Bearer challenge in a Basic-only header")
	}
}
