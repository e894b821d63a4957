package status_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/cmd/internal/tablefmt"
	"github.com/mcpauth/mcpauth/creds"
	"github.com/mcpauth/mcpauth/keyring"
	"github.com/mcpauth/mcpauth/server/clock"
	"github.com/mcpauth/mcpauth/server/servertest"
)

func TestStatusGolden(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	c := clitest.New(t, env)
	c.Clock = &fixedClock{env.Clock}
	c.Open = clitest.ApprovingBrowser(t, env, "hana", "approve")
	if code, _, stderr := c.Run("login", env.URL+"/mcp"); code != 0 {
		t.Fatalf("login: %s", stderr)
	}
	code, stdout, stderr := c.Run("status")
	if code != 0 || !strings.Contains(stderr, "protected only by file permissions") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	clitest.Golden(t, "status.txt", stdout)
	code, stdout, stderr = c.Run("status", "-o", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	clitest.Golden(t, "status.json", stdout)
	if code, stdout, _ := c.Run("status", "--account", "nobody"); code != 0 || !strings.Contains(stdout, "default") {
		t.Fatalf("status lists every account: %s", stdout)
	}
}

// fixedClock reads the server's fake clock and waits for real.
type fixedClock struct{ c *clock.Fake }

func (f *fixedClock) Now() time.Time { return f.c.Now() }

func (f *fixedClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// A refresh token whose expiry the server gave (refresh_expires_in) shows
// with it; an entry without a refresh token is not refreshable.
func TestStatusRefreshExpiry(t *testing.T) {
	c := clitest.New(t, nil)
	c.Clock = &fixedClock{clock.NewFake(servertest.Start)}
	st, err := keyring.Open(keyring.Config{Storage: keyring.StorageFile, Dir: c.Vars["MCPAUTH_CONFIG_DIR"]})
	if err != nil {
		t.Fatal(err)
	}
	until := servertest.Start.Add(48 * time.Hour)
	client := &creds.ClientInfo{ClientID: "cid"}
	for _, b := range []struct {
		server string
		bundle creds.Bundle
	}{
		{"https://a.example/mcp", creds.Bundle{AccessToken: "a", RefreshToken: "r", RefreshExpiry: until, TokenEndpoint: "https://a.example/token", Client: client}},
		{"https://b.example/mcp", creds.Bundle{AccessToken: "b", Client: client}},
	} {
		if err := creds.Save(st, b.server, "", b.bundle); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := c.Run("status", "--storage", "file")
	if code != 0 || !strings.Contains(stdout, "  refreshable for 2d") || !strings.Contains(stdout, "  not refreshable") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
}

// Each entry fits COLUMNS, the same on a pipe and a terminal: the server
// URL is a line of its own, whole; the details move down a line, the
// expiry is relative and a long user id shortened.
func TestStatusFitsWidth(t *testing.T) {
	c := clitest.New(t, nil)
	now := clock.NewFake(servertest.Start)
	c.Clock = &fixedClock{now}
	st, err := keyring.Open(keyring.Config{Storage: keyring.StorageFile, Dir: c.Vars["MCPAUTH_CONFIG_DIR"]})
	if err != nil {
		t.Fatal(err)
	}
	client := &creds.ClientInfo{ClientID: "cid"}
	servers := map[string]creds.Bundle{
		"http://127.0.0.1:18080/some/long/path/mcp": {AccessToken: "a", Expiry: servertest.Start.Add(23*time.Hour + 59*time.Minute),
			UserID: "u_Zq3vN8kP2rT6wY1a", UserName: "mona", Client: client},
		"https://mcp-gateway.eu-west-1.internal.example-corporation.com/tenants/acme/mcp": {AccessToken: "b", RefreshToken: "r",
			TokenEndpoint: "https://tools.internal.example.org/token", Client: client, RefreshExpiry: servertest.Start.Add(30 * 24 * time.Hour)},
		"https://mcp.example.com/mcp": {Kind: creds.KindAPIKey, APIKey: "k", UserID: "u_2"},
	}
	for server, b := range servers {
		if err := creds.Save(st, server, "", b); err != nil {
			t.Fatal(err)
		}
	}
	for _, width := range []int{80, 120} {
		c.Vars["COLUMNS"] = strconv.Itoa(width)
		var pipe string
		for _, tty := range []bool{false, true} {
			c.Wrap = func(f *cmdutil.Factory) { f.IO.StdoutTTY = tty }
			code, stdout, stderr := c.Run("status")
			if w := tablefmt.Widest(stdout); code != 0 || w > width {
				t.Errorf("COLUMNS=%d tty=%v: exit %d, a line %d wide:\n%s%s", width, tty, code, w, stdout, stderr)
			}
			lines := strings.Split(stdout, "\n")
			for server := range servers {
				if !slices.Contains(lines, server) {
					t.Errorf("COLUMNS=%d: %s is not a line of its own:\n%s", width, server, stdout)
				}
			}
			if !tty {
				pipe = stdout
				clitest.Golden(t, fmt.Sprintf("status-%d.txt", width), stdout)
			} else if stdout != pipe {
				t.Errorf("COLUMNS=%d: a terminal gets another layout than a pipe:\n%s\n%s", width, stdout, pipe)
			}
		}
	}
}
