package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/server"
	"github.com/mcpauth/mcpauth/server/servertest"
	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

var (
	jwtKey1  = []byte("rotation-jwt-key-1-0123456789abcdefghijkl")
	jwtKey2  = []byte("rotation-jwt-key-2-0123456789abcdefghijkl")
	jwtKey3  = []byte("rotation-jwt-key-3-0123456789abcdefghijkl")
	sealKey1 = []byte("rotation-seal-key-1-0123456789abcdefghijk")
	sealKey2 = []byte("rotation-seal-key-2-0123456789abcdefghijk")
)

// restart stops env, as a server process would stop, and starts another on
// the same store with opts.
func restart(t *testing.T, env *servertest.Env, opts servertest.Options) *servertest.Env {
	t.Helper()
	env.Instance.Close()
	opts.Store, opts.Clock = env.Store, env.Clock
	return servertest.New(t, opts)
}

// firstKey signs rita in and returns her API key and user id.
func firstKey(t *testing.T, env *servertest.Env) (apiKey, user string) {
	t.Helper()
	apiKey, err := env.Browser("rita").APIKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return apiKey, userID(t, env, apiKey)
}

func settingsShows(t *testing.T, env *servertest.Env, want string) {
	t.Helper()
	got, err := env.Browser("rita").APIKey(context.Background())
	if err != nil || got != want {
		t.Fatalf("Settings shows %q (%v), want the key from before the rotation", got, err)
	}
}

// Rotating the signing key alone keeps Settings working: the API key is not
// sealed under anything derived from the signing key (it was: a 500).
func TestSigningKeyRotationKeepsSettings(t *testing.T) {
	env := servertest.New(t, servertest.Options{SigningKey: jwtKey1})
	apiKey, _ := firstKey(t, env)
	env = restart(t, env, servertest.Options{SigningKey: jwtKey2})
	settingsShows(t, env, apiKey)
}

// The full rotation: new signing and sealing keys with the previous ones
// kept. Old tokens still verify, old API keys still work and show; the
// start re-seals every key, so a later start without the previous keys
// still shows them, and only then do old tokens stop verifying.
func TestKeyRotation(t *testing.T) {
	env := servertest.New(t, servertest.Options{SigningKey: jwtKey1, SealingKey: sealKey1})
	apiKey, user := firstKey(t, env)

	env = restart(t, env, servertest.Options{
		SigningKey: jwtKey2, PreviousSigningKeys: [][]byte{jwtKey1},
		SealingKey: sealKey2, PreviousSealingKeys: [][]byte{sealKey1},
	})
	// A restart moves the test server to a new port, hence a new issuer: sign
	// the "old" token for this one, with the previous key.
	oldToken, err := env.Server.IssueWithKeyForTest(jwtKey1, user)
	if err != nil {
		t.Fatal(err)
	}
	if got := userID(t, env, oldToken); got != user {
		t.Fatalf("a token signed before the rotation names %s, want %s", got, user)
	}
	if got := userID(t, env, apiKey); got != user {
		t.Fatalf("the API key names %s after the rotation, want %s", got, user)
	}
	strangerToken, err := env.Server.IssueWithKeyForTest(jwtKey3, user)
	if err != nil {
		t.Fatal(err)
	}
	if resp, _ := ping(t, env, strangerToken); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a token signed by a key never configured: status %d, want 401", resp.StatusCode)
	}

	// No browser visited Settings above: only the start re-sealed.
	env = restart(t, env, servertest.Options{SigningKey: jwtKey2, SealingKey: sealKey2})
	settingsShows(t, env, apiKey)
	if oldToken, err = env.Server.IssueWithKeyForTest(jwtKey1, user); err != nil { // for this instance's issuer
		t.Fatal(err)
	}
	if resp, body := ping(t, env, oldToken); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a token signed by a dropped key: status %d %s, want 401", resp.StatusCode, body)
	}
	newToken, err := env.Server.IssueWithKeyForTest(jwtKey2, user)
	if err != nil {
		t.Fatal(err)
	}
	if got := userID(t, env, newToken); got != user {
		t.Fatalf("a token signed by the current key names %s, want %s", got, user)
	}
}

// A key sealed by a version before separate sealing keys (under a key
// derived from the signing key) opens and is re-sealed at start.
func TestLegacySealedKeyResealed(t *testing.T) {
	st := memory.New()
	env := servertest.New(t, servertest.Options{Store: st, SigningKey: jwtKey1})
	apiKey, user := firstKey(t, env)
	legacy, err := server.LegacySealForTest(jwtKey1, apiKey, user)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetAPIKey(t.Context(), store.APIKey{UserID: user, Hash: hashOf(t, st, user), Sealed: legacy}); err != nil {
		t.Fatal(err)
	}
	env = restart(t, env, servertest.Options{SigningKey: jwtKey1})
	k, err := st.GetAPIKeyByUser(t.Context(), user)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(k.Sealed, legacy) {
		t.Fatal("the legacy sealed key was not re-sealed at start")
	}
	// Now under the generated sealing key: a new signing key does not matter.
	env = restart(t, env, servertest.Options{SigningKey: jwtKey2})
	settingsShows(t, env, apiKey)
}

func hashOf(t *testing.T, st store.Store, user string) string {
	t.Helper()
	k, err := st.GetAPIKeyByUser(t.Context(), user)
	if err != nil {
		t.Fatal(err)
	}
	return k.Hash
}

// When no configured key opens the stored API key, Settings says so on a
// page (not a 500) and offers a new key; the old one works until replaced.
func TestUnreadableKeyOffersRegeneration(t *testing.T) {
	env := servertest.New(t, servertest.Options{SigningKey: jwtKey1, SealingKey: sealKey1})
	apiKey, user := firstKey(t, env)
	env = restart(t, env, servertest.Options{SigningKey: jwtKey1, SealingKey: sealKey2})

	b := env.Browser("rita")
	p, err := b.Get(context.Background(), env.URL+"/settings")
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != http.StatusOK {
		t.Fatalf("Settings: status %d, want 200: %.300s", p.Status, p.Body)
	}
	for _, want := range []string{`id="key-unreadable"`, `value="regenerate"`, "still works"} {
		if !strings.Contains(string(p.Body), want) {
			t.Errorf("Settings page lacks %q:\n%s", want, p.Body)
		}
	}
	if strings.Contains(string(p.Body), apiKey) {
		t.Fatal("Settings shows the key it says it cannot open")
	}
	if got := userID(t, env, apiKey); got != user {
		t.Fatalf("the unreadable key names %s, want %s: it should still authenticate", got, user)
	}

	fresh, err := b.RegenerateAPIKey(context.Background())
	if err != nil || fresh == "" || fresh == apiKey {
		t.Fatalf("regenerating: %q, %v", fresh, err)
	}
	if got := userID(t, env, fresh); got != user {
		t.Fatalf("the new key names %s, want %s", got, user)
	}
	if resp, _ := ping(t, env, apiKey); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the replaced key: status %d, want 401", resp.StatusCode)
	}
}

// Generated keys: the sealing key is a secret of its own, not the signing key.
func TestGeneratedSealingKeyIsItsOwn(t *testing.T) {
	st := memory.New()
	servertest.New(t, servertest.Options{Store: st})
	none := func() ([]byte, error) { return nil, io.ErrUnexpectedEOF }
	jwt, err1 := st.GetOrCreateSecret(t.Context(), "jwt-signing-key", none)
	seal, err2 := st.GetOrCreateSecret(t.Context(), "api-key-sealing-key", none)
	if err1 != nil || err2 != nil || len(seal) < 32 || bytes.Equal(jwt, seal) {
		t.Fatalf("generated keys: jwt %d bytes (%v), sealing %d bytes (%v), equal %v", len(jwt), err1, len(seal), err2, bytes.Equal(jwt, seal))
	}
}

func TestSealingKeyConfigRefused(t *testing.T) {
	for name, cfg := range map[string]server.Config{
		"same as signing key": {SigningKey: jwtKey1, SealingKey: jwtKey1},
		"short sealing key":   {SigningKey: jwtKey1, SealingKey: []byte("short")},
		"short previous":      {SigningKey: jwtKey1, SealingKey: sealKey1, PreviousSealingKeys: [][]byte{[]byte("short")}},
		"short previous jwt":  {SigningKey: jwtKey1, PreviousSigningKeys: [][]byte{[]byte("short")}},
	} {
		cfg.BaseURL, cfg.Store = "http://127.0.0.1:1", memory.New()
		if _, err := server.New(t.Context(), cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
