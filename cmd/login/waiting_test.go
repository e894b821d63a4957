package login_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clitest"
	"github.com/mcpauth/mcpauth/flows/flowstest"
)

// Printing the URL (no browser), login offers a short address on its own
// listener that redirects to the long URL, and counts down to --timeout on
// a terminal instead of waiting in silence. Opening the short address logs
// in.
func TestLoginPrintsShortURLAndCountsDown(t *testing.T) {
	s := flowstest.NewServer(t)
	c := clitest.New(t, nil)
	c.TTY = true
	c.Stdin = ""
	out, errOut := &clitest.Buffer{}, &clitest.Buffer{}
	done := make(chan int, 1)
	go func() { done <- c.RunWith(out, errOut, "login", s.URL+"/mcp", "--no-browser") }()
	start := errOut.WaitFor(t, regexp.MustCompile(`in a browser on this machine: (http://127\.0\.0\.1:\d+/start)`))[1]
	errOut.WaitFor(t, regexp.MustCompile(`Waiting for the browser… \d+m\d+s left \(--timeout to wait longer\)`))
	resp, err := http.Get(start) // follows /start -> the authorization URL -> the callback
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if s.Count("/oauth/token", "authorization_code") != 1 {
		t.Fatal("no code exchange")
	}
}
