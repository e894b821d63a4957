package server

import (
	"net/http"
	"net/url"
)

// OpenID Connect Registration application types, as MCP 2026-07-28 uses them.
const (
	appNative = "native"
	appWeb    = "web"
)

// checkApplicationType validates application_type against the (already
// checked) redirect URIs and fills the default: native when every redirect
// URI is loopback or a private-use scheme (where native apps receive
// responses, RFC 8252 §7), else web. A web client receives responses on a
// server, so it needs https redirect URIs. Native clients may use https too
// (claimed URLs, RFC 8252 §7.2).
func checkApplicationType(req *registrationRequest) *oauthError {
	switch req.ApplicationType {
	case "":
		req.ApplicationType = appNative
		for _, u := range req.RedirectURIs {
			if !nativeRedirect(u) {
				req.ApplicationType = appWeb
				break
			}
		}
	case appNative:
	case appWeb:
		for _, u := range req.RedirectURIs {
			if p, err := url.Parse(u); err != nil || p.Scheme != "https" {
				return newError(http.StatusBadRequest, errInvalidRedirectURI, "redirect_uri %q: a web client needs https redirect URIs", truncate(u, 100))
			}
		}
	default:
		return newError(http.StatusBadRequest, errInvalidClientMetadata, "application_type must be native or web")
	}
	return nil
}

// nativeRedirect: http on a loopback host, or a private-use scheme (the
// URI passed checkRedirectURI, so any scheme but http(s) is one).
func nativeRedirect(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "http":
		return isLoopbackHost(u.Hostname())
	case "https":
		return false
	}
	return true
}
