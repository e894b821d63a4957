package serve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/internal/iostreams"
)

// A --machine-clients file that does not load is a usage error before
// the server listens, naming the flag and never the secret.
func TestMachineClientsFileRefused(t *testing.T) {
	if o := parse(t, nil); o.MachineClients != "" || o.DPoP {
		t.Errorf("defaults: --machine-clients %q, --dpop %v; want off", o.MachineClients, o.DPoP)
	}
	dir := t.TempDir()
	secret := filepath.Join(dir, "short.secret")
	if err := os.WriteFile(secret, []byte("hunter2hunter2"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "machines.json")
	if err := os.WriteFile(file, []byte(`[{"client_id":"ci-bot","client_secret_file":"short.secret"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	ios, _, _, _ := iostreams.Test()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	err := Run(ctx, &Options{
		IO: ios, Getenv: func(string) string { return "" }, Addr: "127.0.0.1:0", DB: ":memory:",
		OIDCIssuer: "http://127.0.0.1:1", LogFormat: "text", LogLevel: "error", MachineClients: file,
		Ready: func(string) { t.Error("the server started listening"); cancel() },
	})
	var ce *clierr.ExitError
	if err == nil || !strings.Contains(err.Error(), "--machine-clients") || strings.Contains(err.Error(), "hunter2") || !errors.As(err, &ce) || ce.Code != clierr.ExitUsage {
		t.Fatalf("err = %v, want a usage error naming --machine-clients without the secret", err)
	}
}
