//go:build unix

package secretflag

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// A private secret's file that group or others may read is refused, by
// flag and by environment, naming the flag, the fix and the override; the
// override, or an owner-only file, reads it.
func TestPrivateRefusesAnOpenFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte("s3cret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	resolve := func(allow bool, args []string, env map[string]string) (string, error) {
		fl := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var v string
		s := Bind(fl, &v, "client-secret", "the secret").Private(&allow)
		if err := fl.Parse(args); err != nil {
			t.Fatal(err)
		}
		err := s.Resolve(strings.NewReader(""), func(k string) string { return env[k] })
		return v, err
	}
	for name, c := range map[string]struct {
		args []string
		env  map[string]string
		flag string
	}{
		"flag": {[]string{"--client-secret-file", file}, nil, "--client-secret-file"},
		"env":  {nil, map[string]string{"MCPAUTH_CLIENT_SECRET_FILE": file}, "MCPAUTH_CLIENT_SECRET_FILE"},
	} {
		_, err := resolve(false, c.args, c.env)
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.flag+" "+file) ||
			!strings.Contains(err.Error(), "chmod 600 "+file) || !strings.Contains(err.Error(), AllowInsecureFlag) {
			t.Errorf("%s: 0644 file: %v", name, err)
		}
		if v, err := resolve(true, c.args, c.env); err != nil || v != "s3cret" {
			t.Errorf("%s: allowed: %q, %v", name, v, err)
		}
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	if v, err := resolve(false, []string{"--client-secret-file", file}, nil); err != nil || v != "s3cret" {
		t.Errorf("0600 file: %q, %v", v, err)
	}
}
