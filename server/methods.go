package server

import (
	"net/http"
	"slices"
	"strings"
)

// routeTable is a ServeMux that remembers which methods each path serves,
// so that a known path asked with another method gets 405 with Allow
// (RFC 9110 §15.5.6) rather than the catch-all's 404 (decisions.md
// "Methods"). ServeMux would answer 405 itself, but only without a
// catch-all, and in plain text.
type routeTable struct {
	*http.ServeMux
	methods map[string][]string // path → methods registered for it
	order   []string            // paths in registration order, for a stable setup
	anyPath map[string]bool     // paths registered for every method
}

func newRouteTable() *routeTable {
	return &routeTable{ServeMux: http.NewServeMux(), methods: map[string][]string{}, anyPath: map[string]bool{}}
}

func (t *routeTable) Handle(pattern string, h http.Handler) {
	t.record(pattern)
	t.ServeMux.Handle(pattern, h)
}

func (t *routeTable) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	t.Handle(pattern, http.HandlerFunc(h))
}

func (t *routeTable) record(pattern string) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		t.anyPath[pattern] = true
		return
	}
	if _, seen := t.methods[path]; !seen {
		t.order = append(t.order, path)
	}
	t.methods[path] = append(t.methods[path], method)
	if method == http.MethodGet {
		t.methods[path] = append(t.methods[path], http.MethodHead) // ServeMux serves HEAD with GET
	}
}

// methodNotAllowed registers, for every path served for some methods only,
// a handler for the others. Call it after the routes, before the catch-all.
func (t *routeTable) methodNotAllowed(h func(allow string) http.Handler) {
	for _, path := range t.order {
		if t.anyPath[path] {
			continue
		}
		ms := slices.Clone(t.methods[path])
		slices.Sort(ms)
		t.ServeMux.Handle(path, h(strings.Join(slices.Compact(ms), ", ")))
	}
}

// handleMethodNotAllowed answers 405 with Allow: an RFC 6749-shaped JSON
// body on API and OAuth paths, the error page on browser pages.
func (s *Server) handleMethodNotAllowed(allow string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		if browserPath(r.URL.Path) {
			s.renderError(w, r, http.StatusMethodNotAllowed, "Method not allowed", "This page does not accept that kind of request.", "method_not_allowed")
			return
		}
		writeOAuthError(w, newError(http.StatusMethodNotAllowed, errInvalidRequest, "method %s not allowed; allowed: %s", truncate(r.Method, 20), allow))
	})
}

func browserPath(p string) bool {
	return p == "/" || p == "/settings" || strings.HasPrefix(p, "/auth/") || strings.HasPrefix(p, "/static/")
}
