package server_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
)

// machineFaults break the client credentials grant and DPoP, each caught
// by the machine checks written for it.
func machineFaults() []fault {
	return []fault{
		{name: "client assertion replay accepted", wrap: noClock(replayAssertions), wantFail: []string{"MACH-04"}},
		{name: "DPoP proof ignored at the token endpoint", wrap: noClock(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/oauth/token" {
					r.Header.Del("DPoP")
				}
				next.ServeHTTP(w, r)
			})
		}), wantFail: []string{"MACH-06", "MACH-07", "MACH-08", "MACH-09"}},
	}
}

// replayAssertions answers a client assertion presented again with the
// answer it got the first time, as a server that keeps no jti would.
func replayAssertions(next http.Handler) http.Handler {
	var mu sync.Mutex
	seen := map[string]*httptest.ResponseRecorder{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/oauth/token" {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		replaceBody(r, body)
		form, _ := url.ParseQuery(string(body))
		a := form.Get("client_assertion")
		mu.Lock()
		first, ok := seen[a]
		mu.Unlock()
		if a == "" || !ok {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			if a != "" && rec.Code == http.StatusOK {
				mu.Lock()
				seen[a] = rec
				mu.Unlock()
			}
			first = rec
		}
		for k, v := range first.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(first.Code)
		_, _ = io.Copy(w, bytes.NewReader(first.Body.Bytes()))
	})
}
