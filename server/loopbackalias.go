package server

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// toLoopbackBase redirects a browser that reached a loopback base URL
// under another loopback spelling (localhost for 127.0.0.1, or the
// reverse, same port) to the same page at the base URL. Cookies are kept
// per host: a sign-in begun at localhost came back from the identity
// provider to 127.0.0.1 without its cookie and ended as an expired link,
// again on every retry. Only browsers (GET or HEAD asking for HTML) are
// redirected; API clients get the answer to what they asked, whose
// metadata names the base URL. A base URL that is not loopback passes
// everything through.
func (s *Server) toLoopbackBase(next http.Handler) http.Handler {
	base, err := url.Parse(s.baseURL)
	if err != nil || !isLoopbackHost(base.Hostname()) {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && !strings.EqualFold(r.Host, base.Host) &&
			isLoopbackAlias(r.Host, base) && strings.Contains(r.Header.Get("Accept"), "text/html") {
			http.Redirect(w, r, base.Scheme+"://"+base.Host+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopbackAlias: host (a Host header) names a loopback host on base's
// port.
func isLoopbackAlias(host string, base *url.URL) bool {
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		h, port = host, ""
	}
	return isLoopbackHost(strings.Trim(h, "[]")) && port == base.Port()
}
