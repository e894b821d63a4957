package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/host"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/internal/syncbuf"
)

const (
	server = "https://mcp.example.com/mcp"
	bin    = "/opt/mcpauth/bin/mcpauth"
)

// machine is a user with a home folder of their own under the test's
// temp dir, on goos, running bin.
type machine struct {
	t      *testing.T
	home   string
	config string // MCPAUTH_CONFIG_DIR
	goos   string
	xdg    string // $XDG_CONFIG_HOME, "" when unset
	vars   map[string]string
	json   bool
}

func newMachine(t *testing.T, goos string) *machine {
	root := t.TempDir()
	m := &machine{t: t, home: filepath.Join(root, "home"), config: filepath.Join(root, "config"), goos: goos}
	m.vars = map[string]string{"MCPAUTH_CONFIG_DIR": m.config}
	if err := os.MkdirAll(m.home, 0o700); err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *machine) inject() host.Machine {
	return host.Machine{GOOS: m.goos, XDGConfigHome: m.xdg, Home: func() (string, error) { return m.home, nil },
		Executable: func() (string, error) { return bin, nil }, Exists: func(p string) bool { _, err := os.Stat(p); return err == nil }}
}

// run runs a host subcommand and returns its error, stdout and stderr.
func (m *machine) run(args ...string) (error, string, string) {
	m.t.Helper()
	var out, errOut syncbuf.Buffer
	f := cmdutil.New(&cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, func(k string) string { return m.vars[k] })
	if m.json {
		f.Globals.Output = "json"
	}
	if s := m.vars["MCPAUTH_STORAGE"]; s != "" {
		f.Globals.Storage, f.Globals.StorageSet = s, true
	}
	f.Globals.Account = m.vars["MCPAUTH_ACCOUNT"]
	cmd := host.NewCmd(f,
		func(ctx context.Context, o *host.AddOptions) error {
			o.Machine = m.inject()
			return host.AddRun(ctx, o)
		},
		func(ctx context.Context, o *host.ListOptions) error {
			o.Machine = m.inject()
			return host.ListRun(ctx, o)
		},
		func(ctx context.Context, o *host.RemoveOptions) error {
			o.Machine = m.inject()
			return host.RemoveRun(ctx, o)
		})
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return err, out.String(), errOut.String()
}

func (m *machine) read(rel string) string {
	m.t.Helper()
	b, err := os.ReadFile(filepath.Join(m.home, rel))
	if err != nil {
		m.t.Fatal(err)
	}
	return string(b)
}

func (m *machine) write(rel, content string) {
	m.t.Helper()
	p := filepath.Join(m.home, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		m.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		m.t.Fatal(err)
	}
}

// golden compares a file's content with testdata/name, with the temp
// config folder written as $CONFIG.
func (m *machine) golden(name, got string) {
	m.t.Helper()
	clitest.Golden(m.t, name, strings.ReplaceAll(got, m.config, "$CONFIG"))
}
