package server

import (
	"mime"
	"net/http"
	"net/url"
	"time"
)

type testClockState struct {
	Now      string `json:"now"`
	OffsetMS int64  `json:"offset_ms"`
}

// handleTestClock reads (GET) or advances (POST {"advance": "10m1s"}) the
// server's clock. It exists only with `mcpauth serve --test-clock`, which is
// refused on non-loopback addresses. Time only moves forward.
func (s *Server) handleTestClock(w http.ResponseWriter, r *http.Request) {
	tc := s.cfg.TestClock
	if r.Method == http.MethodPost {
		// A web page can post a form cross-origin without a preflight, but
		// not JSON: require JSON and refuse a foreign Origin, so no site a
		// developer visits can move their test server's time.
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			writeOAuthError(w, invalidRequest("the test clock takes a JSON body"))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != s.origin() {
			writeOAuthError(w, newError(http.StatusForbidden, errInvalidRequest, "cross-origin requests may not move the test clock"))
			return
		}
		p, oerr := readParams(r, true)
		if oerr != nil {
			writeOAuthError(w, oerr)
			return
		}
		d, err := time.ParseDuration(p["advance"])
		if err != nil || d < 0 || d > 400*24*time.Hour {
			writeOAuthError(w, invalidRequest(`advance must be a non-negative Go duration such as "10m1s"`))
			return
		}
		if err := tc.Advance(r.Context(), d); err != nil {
			s.serverError(w, r, "advancing test clock", err)
			return
		}
		s.log.Warn("test clock advanced", "by", d.String(), "offset", tc.Offset().String())
	}
	writeJSON(w, http.StatusOK, testClockState{Now: tc.Now().UTC().Format(time.RFC3339Nano), OffsetMS: tc.Offset().Milliseconds()})
}

// origin is the scheme://host[:port] of the base URL, as browsers send it
// in Origin.
func (s *Server) origin() string {
	u, err := url.Parse(s.baseURL)
	if err != nil {
		return s.baseURL
	}
	return u.Scheme + "://" + u.Host
}
