package cmdutil

import (
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
)

func TestCredentialFlagOrigin(t *testing.T) {
	if _, err := (CredentialFlag{}).Origin("http://mcp.example.com/mcp"); clierr.CodeFor(err) != clierr.ExitUsage {
		t.Errorf("plain http off loopback: %v", err)
	}
	for _, ok := range []string{"https://mcp.example.com/mcp", "http://127.0.0.1:8080/mcp", "http://[::1]:1/mcp", "http://localhost/mcp"} {
		if _, err := (CredentialFlag{}).Origin(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if o, err := (CredentialFlag{AllowInsecure: true}).Origin("http://mcp.example.com/mcp"); err != nil || o.String() != "http://mcp.example.com" {
		t.Errorf("with the override: %v %v", o, err)
	}
}
