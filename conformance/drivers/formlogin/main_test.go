package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// interactionAS serves sign-in and consent pages shaped like
// node-oidc-provider's development interactions: a login form, then a
// consent form with a Continue button, and on both pages a "[ Cancel ]"
// link (no deny button) that denies. The consent page also has a link
// whose text merely contains a deny word, which a driver must not follow.
func interactionAS(t *testing.T, password string) *httptest.Server {
	var redirect atomic.Value
	back := func(w http.ResponseWriter, r *http.Request, q string) {
		http.Redirect(w, r, redirect.Load().(string)+"?"+q+"&state=s1", http.StatusSeeOther)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		redirect.Store(r.URL.Query().Get("redirect_uri"))
		http.Redirect(w, r, "/interaction/u1", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /interaction/u1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if _, err := r.Cookie("session"); err != nil {
			fmt.Fprint(w, `<h1>Sign-in</h1><form action="/interaction/u1/login" method="post"><input type="hidden" name="prompt" value="login">
<input required type="text" name="login"><input required type="password" name="password"><button type="submit">Sign-in</button></form>
<a href="/interaction/u1/abort">[ Cancel ]</a>`)
			return
		}
		fmt.Fprint(w, `<h1>Authorize</h1><form action="/interaction/u1/confirm" method="post"><input type="hidden" name="prompt" value="consent">
<button autofocus type="submit">Continue</button></form>
<a href="/nowhere">No account? Read this</a> <a href="/interaction/u1/abort">[ Cancel ]</a>`)
	})
	mux.HandleFunc("POST /interaction/u1/login", func(w http.ResponseWriter, r *http.Request) {
		if r.PostFormValue("login") == "" || r.PostFormValue("password") != password {
			http.Redirect(w, r, "/interaction/u1", http.StatusSeeOther)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "session", Value: r.PostFormValue("login"), Path: "/"})
		http.Redirect(w, r, "/interaction/u1", http.StatusSeeOther)
	})
	mux.HandleFunc("POST /interaction/u1/confirm", func(w http.ResponseWriter, r *http.Request) {
		if r.PostFormValue("prompt") != "consent" {
			http.Error(w, "no prompt", http.StatusBadRequest)
			return
		}
		back(w, r, "code=c1")
	})
	mux.HandleFunc("GET /interaction/u1/abort", func(w http.ResponseWriter, r *http.Request) {
		back(w, r, "error=access_denied")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// The driver signs in, then approves with the consent form's button or,
// told to deny, follows the page's "[ Cancel ]" link; either way it brings
// the redirect to the client's loopback callback.
func TestDriverApprovesAndDeniesWithCancelLink(t *testing.T) {
	const password = "correct horse"
	as := interactionAS(t, password)
	var got atomic.Value
	client := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Store(r.URL.RawQuery) }))
	t.Cleanup(client.Close)
	authURL := as.URL + "/authorize?" + url.Values{"redirect_uri": {client.URL + "/callback"}, "state": {"s1"}}.Encode()

	for _, tc := range []struct {
		name   string
		button *regexp.Regexp
		want   string
	}{
		{"approve", approve, "code=c1&state=s1"},
		{"deny", deny, "error=access_denied&state=s1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got.Store("")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			u, err := driver{user: "alice", password: password, button: tc.button}.run(ctx, authURL)
			if err != nil {
				t.Fatal(err)
			}
			if want := client.URL + "/callback?" + tc.want; u != want {
				t.Errorf("redirect %s, want %s", u, want)
			}
			if q := got.Load(); q != tc.want {
				t.Errorf("the client's callback got %q, want %q", q, tc.want)
			}
		})
	}

	// A wrong password leaves it on the sign-in page, which it names;
	// it does not cancel its way out.
	got.Store("")
	_, err := driver{user: "alice", password: "wrong", button: deny}.run(context.Background(), authURL)
	if err == nil || !strings.Contains(err.Error(), "Sign-in") || got.Load() != "" {
		t.Fatalf("a wrong password: error %v, callback got %q; want an error naming the sign-in page and no redirect", err, got.Load())
	}
}

// A sign-in page whose form posts to another origin over plain http (a
// second loopback server, standing for the thief): the driver refuses to
// fill the password in, says why, and the other origin receives nothing.
func TestDriverPostsThePasswordOnlyToThePagesOrigin(t *testing.T) {
	var stolen atomic.Int32
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { stolen.Add(1) }))
	t.Cleanup(thief.Close)
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<form action="%s/steal" method="post"><input type="text" name="username"><input type="password" name="password"><button>Sign in</button></form>`, thief.URL)
	}))
	t.Cleanup(as.Close)
	authURL := as.URL + "/authorize?" + url.Values{"redirect_uri": {"http://127.0.0.1:9/callback"}, "state": {"s1"}}.Encode()
	_, err := driver{user: "alice", password: "correct horse", button: approve}.run(context.Background(), authURL)
	if err == nil || !strings.Contains(err.Error(), "another origin") || strings.Contains(err.Error(), "correct horse") {
		t.Fatalf("error %v, want a refusal naming the other origin (and not the password)", err)
	}
	if n := stolen.Load(); n != 0 {
		t.Fatalf("the other origin received %d requests", n)
	}

	for _, tc := range []struct {
		page, action string
		ok           bool
	}{
		{"https://as.example/login", "https://as.example/login/submit", true},
		{"http://127.0.0.1:8080/login", "http://127.0.0.1:8080/session", true},
		{"https://as.example/login", "http://as.example/login/submit", false},
		{"https://as.example/login", "https://idp.example/login", false},
		{"http://as.example/login", "http://as.example/login/submit", false},
	} {
		page, _ := url.Parse(tc.page)
		action, _ := url.Parse(tc.action)
		if err := credentialTarget(page, action); (err == nil) != tc.ok {
			t.Errorf("%s posting to %s: %v, want ok=%v", tc.page, tc.action, err, tc.ok)
		}
	}
}
