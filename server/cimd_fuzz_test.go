package server

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzMetadataDocument: whatever the document, client_id URL and
// Cache-Control header, the validator never panics, is deterministic, and
// accepts only what the rules allow: the exact client_id, auth method none,
// no secret, 1-10 acceptable redirect URIs (each of which then matches),
// supported grant types, a printable name; the URL check passes only https
// URLs with a host and a path and without user info or fragment; and the
// cache lifetime stays within 60 s..24 h.
func FuzzMetadataDocument(f *testing.F) {
	const id = "https://client.example/app.json"
	for _, seed := range []struct{ id, doc, cc string }{
		{id, `{"client_id":"` + id + `","redirect_uris":["http://127.0.0.1/cb"]}`, "max-age=600"},
		{id, `{"client_id":"` + id + `","client_name":"A","redirect_uris":["https://client.example/cb","com.example:/cb"],"grant_types":["authorization_code","refresh_token"],"token_endpoint_auth_method":"none"}`, ""},
		{id, `{"client_id":"` + id + `","redirect_uris":["http://evil.example/cb"]}`, "no-store"},
		{id, `{"client_id":"` + id + `","redirect_uris":["http://127.0.0.1/cb"],"client_secret":"x"}`, "max-age=0"},
		{id, `{"client_id":"` + id + `/","redirect_uris":["http://127.0.0.1/cb"]}`, `max-age="99999999999999999999"`},
		{"https://client.example/a/../b", `{}`, "public, max-age=120"},
		{"https://u@client.example/", `null`, "max-age=-1"},
		{id, `{"client_id":"` + id + `","redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"client_secret_post"}`, ""},
	} {
		f.Add(seed.id, []byte(seed.doc), seed.cc)
	}
	f.Fuzz(func(t *testing.T, clientID string, body []byte, cacheControl string) {
		if d := cacheLifetime(http.Header{"Cache-Control": {cacheControl}}); d < cimdMinMaxAge || d > cimdMaxMaxAge {
			t.Fatalf("cacheLifetime(%q) = %v, outside 60s..24h", cacheControl, d)
		}
		if checkMetadataDocumentURL(clientID) == "" {
			u, err := url.Parse(clientID)
			if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.Path == "" || u.Path == "/" || u.User != nil || strings.Contains(clientID, "#") {
				t.Fatalf("URL check accepted %q", clientID)
			}
		}

		c, err := parseMetadataDocument(newGrantRegistry(), clientID, body)
		c2, err2 := parseMetadataDocument(newGrantRegistry(), clientID, body)
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(c, c2) {
			t.Fatalf("not deterministic: %+v %v / %+v %v", c, err, c2, err2)
		}
		if err != nil {
			if _, ok := err.(*cimdError); !ok {
				t.Fatalf("error %v (%T) is not a metadata document error", err, err)
			}
			return
		}
		var raw map[string]any
		if json.Unmarshal(body, &raw) != nil {
			t.Fatalf("accepted a document encoding/json cannot read: %q", body)
		}
		if raw["client_id"] != clientID || c.ID != clientID {
			t.Fatalf("accepted client_id %v for URL %q", raw["client_id"], clientID)
		}
		if m, ok := raw["token_endpoint_auth_method"]; ok && m != nil && m != "none" || c.TokenEndpointAuthMethod != "none" {
			t.Fatalf("accepted token_endpoint_auth_method %v", m)
		}
		if _, ok := raw["client_secret"]; ok {
			t.Fatal("accepted a document with client_secret")
		}
		if n := len(c.RedirectURIs); n < 1 || n > maxRedirectURIs {
			t.Fatalf("accepted %d redirect_uris", n)
		}
		for _, r := range c.RedirectURIs {
			if reason := checkRedirectURI(r); reason != "" {
				t.Fatalf("accepted redirect_uri %q: %s", r, reason)
			}
			if !redirectURIRegistered(c.RedirectURIs, r) {
				t.Fatalf("listed redirect_uri %q does not match itself", r)
			}
		}
		for i, g := range c.GrantTypes {
			if g != grantAuthCode && g != grantDeviceCode && g != "refresh_token" || slices.Contains(c.GrantTypes[:i], g) {
				t.Fatalf("grant types %q", c.GrantTypes)
			}
		}
		if utf8.RuneCountInString(c.Name) > maxClientNameLen || strings.IndexFunc(c.Name, unicode.IsControl) >= 0 || strings.TrimSpace(c.Name) != c.Name {
			t.Fatalf("client_name %q", c.Name)
		}
	})
}
