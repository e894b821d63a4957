package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// newCLI is the CLI with nothing remembered and no --storage override.
func newCLI(t *testing.T) *clitest.CLI {
	c := clitest.New(t, nil)
	delete(c.Vars, "MCPAUTH_STORAGE")
	c.Clock = flowstest.NewFakeClock(time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC))
	return c
}

func TestConfigSetGetRoundTrip(t *testing.T) {
	c := newCLI(t)
	if code, stdout, stderr := c.Run("config", "get", "storage"); code != 0 || stdout != "auto\n" {
		t.Fatalf("get before set: exit %d %q %s; want auto", code, stdout, stderr)
	}
	for _, v := range []string{"file", "keyring", "auto", "file"} {
		if code, _, stderr := c.Run("config", "set", "storage", v); code != 0 || !strings.Contains(stderr, "storage set to "+v) {
			t.Fatalf("set %s: exit %d %s", v, code, stderr)
		}
		if code, stdout, stderr := c.Run("config", "get", "storage"); code != 0 || stdout != v+"\n" || !strings.Contains(stderr, "since 2026-11-24") {
			t.Fatalf("get after set %s: exit %d %q %s", v, code, stdout, stderr)
		}
	}
	code, stdout, _ := c.Run("config", "get", "storage", "-o", "json")
	var one struct{ Key, Value, Reason, Set_At string }
	if code != 0 || json.Unmarshal([]byte(stdout), &one) != nil || one.Key != "storage" || one.Value != "file" || one.Reason == "" || !strings.HasPrefix(one.Set_At, "2026-11-24T09:30") {
		t.Fatalf("get -o json: exit %d %s", code, stdout)
	}
	// No key lists every setting.
	if code, stdout, _ := c.Run("config", "get"); code != 0 || !strings.HasPrefix(stdout, "storage=file  # set with mcpauth config set, since 2026-11-24") {
		t.Fatalf("get: exit %d %q", code, stdout)
	}
	var all []map[string]any
	if code, stdout, _ := c.Run("config", "get", "-o", "json"); code != 0 || json.Unmarshal([]byte(stdout), &all) != nil || len(all) != 1 || all[0]["value"] != "file" {
		t.Fatalf("get -o json: exit %d %s", code, stdout)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(filepath.Join(c.Vars["MCPAUTH_CONFIG_DIR"], "settings.json"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("settings.json: %v %v; want 0600", fi, err)
		}
	}
}

func TestConfigRejectsInvalid(t *testing.T) {
	c := newCLI(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"config", "set", "storage", "disk"}, `invalid storage "disk": want auto, keyring or file`},
		{[]string{"config", "set", "storage", ""}, "want auto, keyring or file"},
		{[]string{"config", "set", "colour", "red"}, `unknown setting "colour" (known: storage)`},
		{[]string{"config", "get", "colour"}, `unknown setting "colour" (known: storage)`},
		{[]string{"config", "set", "storage"}, "accepts 2 arg(s)"},
	} {
		if code, _, stderr := c.Run(tt.args...); code != clierr.ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d %s; want %d and %q", tt.args, code, stderr, clierr.ExitUsage, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(c.Vars["MCPAUTH_CONFIG_DIR"], "settings.json")); !os.IsNotExist(err) {
		t.Fatalf("a refused set wrote settings.json: %v", err)
	}
}

// --storage and MCPAUTH_STORAGE win for one command; get says so.
func TestConfigGetShowsOverride(t *testing.T) {
	c := newCLI(t)
	if code, _, stderr := c.Run("config", "set", "storage", "file"); code != 0 {
		t.Fatal(stderr)
	}
	c.Vars["MCPAUTH_STORAGE"] = "keyring"
	code, stdout, _ := c.Run("config", "get", "storage", "-o", "json")
	if code != 0 || !strings.Contains(stdout, `"value": "file"`) || !strings.Contains(stdout, `"overridden_by": "--storage / MCPAUTH_STORAGE (keyring)"`) {
		t.Fatalf("exit %d %s", code, stdout)
	}
	delete(c.Vars, "MCPAUTH_STORAGE")
	if code, stdout, _ := c.Run("config", "get", "storage", "--storage", "auto", "-o", "json"); code != 0 || !strings.Contains(stdout, "(auto)") {
		t.Fatalf("--storage auto: exit %d %s", code, stdout)
	}
}
