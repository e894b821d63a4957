package cmdutil_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/cmd/cmdutil"
	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// Every URL the CLI hands to --browser-command passes oauthwire.CheckLaunchable
// first: a refused one never reaches the program and comes back as
// ErrNotLaunchable for the caller to print; a good one is run, and
// --allow-insecure-http lets plain http to another host through.
func TestOpenerHandsTheProgramOnlyLaunchableURLs(t *testing.T) {
	browser, recorded := clitest.RecordingBrowser(t)
	f := cmdutil.New(&cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, func(string) string { return "" })
	open, _ := f.Opener(browser, false, false)
	for _, bad := range []string{"--output=/tmp/x?response_type=code", "file:///etc/passwd", "javascript:alert(1)", "/oauth/authorize", "http://192.0.2.1/authorize"} {
		if err := open(bad); !errors.Is(err, oauthwire.ErrNotLaunchable) {
			t.Errorf("%s: %v, want ErrNotLaunchable", bad, err)
		}
	}
	insecure, _ := f.Opener(browser, false, true)
	for _, good := range []string{"http://192.0.2.1/authorize", "https://as.example/authorize?x=1"} {
		if err := insecure(good); err != nil {
			t.Fatalf("%s: %v", good, err)
		}
	}
	want := "http://192.0.2.1/authorize\nhttps://as.example/authorize?x=1\n"
	for deadline := time.Now().Add(10 * time.Second); len(recorded()) < len(want) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	got := recorded()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 2 || !strings.Contains(want, lines[0]) || !strings.Contains(want, lines[1]) {
		t.Fatalf("the program got %q, want only the two launchable URLs", got)
	}
}
