package cmdutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/spf13/pflag"
)

func TestParseTarget(t *testing.T) {
	for _, tt := range []struct{ arg, want string }{
		{"http://127.0.0.1:8080/mcp", ""},
		{"https://mcp.example.com/mcp", ""},
		{"127.0.0.1:8080/mcp", `"127.0.0.1:8080/mcp" is not a URL; did you mean http://127.0.0.1:8080/mcp?`},
		{"localhost:8080", `"localhost:8080" is not a URL; did you mean http://localhost:8080?`},
		{"mcp.example.com/mcp", `"mcp.example.com/mcp" is not a URL; did you mean https://mcp.example.com/mcp?`},
		{"ftp://mcp.example.com/mcp", `"ftp://mcp.example.com/mcp" is not an http(s) URL`},
		{"", `"" is not a URL: give the MCP server's URL, e.g. http://127.0.0.1:8080/mcp`},
	} {
		_, err := ParseTarget(tt.arg)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: %v", tt.arg, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || clierr.CodeFor(err) != clierr.ExitUsage):
			t.Errorf("%q: got %v (exit %d), want %q and exit 2", tt.arg, err, clierr.CodeFor(err), tt.want)
		}
	}
}

func TestSecretSources(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "secret")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	for _, tt := range []struct {
		name  string
		args  []string
		stdin string
		env   map[string]string
		want  string
		err   string
	}{
		{"flag", []string{"--client-secret", "s1"}, "", nil, "s1", ""},
		{"stdin dash", []string{"--client-secret", "-"}, "from-stdin\n", nil, "from-stdin", ""},
		{"file", []string{"--client-secret-file", file}, "", nil, "from-file", ""},
		{"file dash", []string{"--client-secret-file", "-"}, "piped\n", nil, "piped", ""},
		{"env", nil, "", map[string]string{"MCPAUTH_CLIENT_SECRET": "from-env"}, "from-env", ""},
		{"env file", nil, "", map[string]string{"MCPAUTH_CLIENT_SECRET_FILE": file}, "from-file", ""},
		{"flag beats env", []string{"--client-secret", "s1"}, "", map[string]string{"MCPAUTH_CLIENT_SECRET": "from-env"}, "s1", ""},
		{"both", []string{"--client-secret", "s1", "--client-secret-file", file}, "", nil, "", "give --client-secret or --client-secret-file, not both"},
		{"empty stdin", []string{"--client-secret", "-"}, "", nil, "", "--client-secret: standard input is empty"},
		{"missing file", []string{"--client-secret-file", filepath.Join(dir, "nope")}, "", nil, "", "--client-secret-file: open"},
		{"none", nil, "", nil, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env = tt.env
			fl := pflag.NewFlagSet("x", pflag.ContinueOnError)
			var got string
			s := BindSecret(fl, &got, "client-secret", "secret")
			if err := fl.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			err := s.Resolve(strings.NewReader(tt.stdin), getenv)
			switch {
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || clierr.CodeFor(err) != clierr.ExitUsage):
				t.Fatalf("err %v, want %q (exit 2)", err, tt.err)
			case tt.err != "":
			case err != nil:
				t.Fatal(err)
			case got != tt.want:
				t.Fatalf("secret %q, want %q", got, tt.want)
			}
		})
	}
}
