package conformance

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/cmd/internal/clierr"
	"github.com/mcpauth/mcpauth/server/local"
	"github.com/mcpauth/mcpauth/server/store/memory"
)

// The test user of passwordGate's sign-in page.
const (
	gateUser     = "alice@example.com"
	gatePassword = "correct horse battery staple"
)

// passwordGate puts an email/password sign-in page of its own in front of
// the reference server's consent page, the vocabulary of many identity
// providers and not the one the form approver knows (it looks for an input
// named username): the form approver cannot get through, a script that
// signs a test user in can.
func passwordGate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/gate/signin":
			back := r.PostFormValue("return")
			if r.PostFormValue("email") != gateUser || r.PostFormValue("password") != gatePassword || !strings.HasPrefix(back, "/oauth/authorize?") {
				gatePage(w, back, "Wrong email or password.")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: "gate", Value: "ok", Path: "/", HttpOnly: true})
			http.Redirect(w, r, back, http.StatusSeeOther)
		case r.Method == http.MethodGet && r.URL.Path == "/oauth/authorize":
			if c, err := r.Cookie("gate"); err == nil && c.Value == "ok" {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			if rec.Code == http.StatusOK {
				gatePage(w, r.URL.RequestURI(), "")
				return
			}
			for k, vs := range rec.Header() {
				w.Header()[k] = vs
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func gatePage(w http.ResponseWriter, back, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><title>Sign in</title><p>%s</p>
<form method="post" action="/gate/signin"><input type="hidden" name="return" value="%s">
<label>Email <input type="email" name="email"></label> <label>Password <input type="password" name="password"></label>
<button type="submit">Sign in</button></form>`, html.EscapeString(msg), html.EscapeString(back))
}

// buildDriver builds the example driver, conformance/drivers/formlogin.
func buildDriver(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "formlogin")
	if out, err := exec.Command("go", "build", "-o", bin, "../../conformance/drivers/formlogin").CombinedOutput(); err != nil {
		t.Fatalf("building the example driver: %v\n%s", err, out)
	}
	return bin
}

// --browser-command with the shipped example driver signs the test user in
// through a sign-in page the form approver cannot drive, and every check
// that needs consent runs and passes; with --approve=form MCP-07, which
// reports the sign-in, is inconclusive and the others are blocked by it,
// none failed.
func TestBrowserCommandDrivesAnySignInPage(t *testing.T) {
	inst, err := local.Start(context.Background(), local.Options{Store: memory.New(), Wrap: passwordGate})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close() })
	mcpURL := inst.URL + "/mcp"
	consent := []string{"MCP-07", "MCP-08", "MCP-09", "MCP-12", "MCP-13"}
	driver := buildDriver(t)

	res := runCmd(t, nil, nil, "--profile", "mcp", mcpURL, "--approve=form", "--json", "-")
	v := verdicts(readJSONReport(t, []byte(res.stdout)))
	if res.code != clierr.ExitOK {
		t.Errorf("--approve=form: exit %d, want 0\n%s", res.code, res.stderr)
	}
	for _, id := range consent {
		want := "blocked"
		if id == "MCP-07" {
			want = "inconclusive"
		}
		if v[id] != want {
			t.Errorf("--approve=form: %s %s, want %s", id, v[id], want)
		}
	}

	t.Setenv("MCPAUTH_DRIVER_USERNAME", gateUser)
	t.Setenv("MCPAUTH_DRIVER_PASSWORD", gatePassword)
	res = runCmd(t, nil, nil, "--profile", "mcp", mcpURL, "--browser-command", driver, "--json", "-")
	rep := readJSONReport(t, []byte(res.stdout))
	if res.code != clierr.ExitOK || rep.Summary.Fail != 0 || rep.Summary.Inconclusive != 0 {
		t.Errorf("--browser-command: exit %d, summary %+v\n%s", res.code, rep.Summary, res.stderr)
	}
	v = verdicts(rep)
	for _, id := range consent {
		if v[id] != "pass" {
			t.Errorf("--browser-command: %s %s, want pass", id, v[id])
		}
	}

	// A wrong password: the driver cannot sign in, the checks are
	// inconclusive, and the run still exits 0.
	t.Setenv("MCPAUTH_DRIVER_PASSWORD", "wrong")
	res = runCmd(t, nil, nil, "--profile", "mcp", mcpURL, "--browser-command", driver, "--run", "^MCP-07$", "--json", "-")
	rep = readJSONReport(t, []byte(res.stdout))
	if v := verdicts(rep); res.code != clierr.ExitOK || v["MCP-07"] != "inconclusive" || !strings.Contains(rep.Checks[0].Reason, "no sign-in or consent form") {
		t.Errorf("wrong password: exit %d, MCP-07 %s, want 0 and inconclusive with the driver's last words\n%s", res.code, v["MCP-07"], res.stderr)
	}
}
