package server

import (
	"context"
	"log/slog"
	mathrand "math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// maxBodyBytes bounds every request body (issue: 1 MiB).
const maxBodyBytes = 1 << 20

func (s *Server) routes() http.Handler {
	mux := newRouteTable()
	prm := http.HandlerFunc(s.handleProtectedResourceMetadata)
	mux.Handle("GET /.well-known/oauth-protected-resource", prm)
	mux.Handle("GET /.well-known/oauth-protected-resource/mcp", prm)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.handleAuthServerMetadata)

	mux.HandleFunc("POST /oauth/register", s.limits.byCaller(s.limits.register, s.handleRegister))
	mux.HandleFunc("GET /oauth/authorize", s.handleAuthorize)
	mux.HandleFunc("POST /oauth/authorize", s.handleAuthorizeDecision)
	mux.HandleFunc("POST /oauth/token", s.handleToken)
	mux.HandleFunc("POST /oauth/revoke", s.handleRevoke)

	mux.HandleFunc("POST /api/oauth/device/code", s.limits.byCaller(s.limits.deviceCode, s.handleDeviceCode))
	mux.HandleFunc("POST /api/oauth/device/token", s.handleDeviceToken)
	mux.HandleFunc("GET /auth/device", s.handleDevicePage)
	mux.HandleFunc("POST /auth/device", s.handleDeviceSubmit)

	mux.HandleFunc("GET /auth/login", s.handleLogin)
	mux.HandleFunc("GET /auth/callback", s.handleCallback)
	mux.HandleFunc("GET /auth/logout", s.handleLogoutPage)
	mux.HandleFunc("POST /auth/logout", s.handleLogout)
	mux.HandleFunc("GET /settings", s.handleSettings)
	mux.HandleFunc("POST /settings", s.handleSettingsSubmit)

	mux.Handle("GET /api/ping", s.requireBearer(http.HandlerFunc(s.handlePing)))
	mux.Handle("/mcp", s.requireBearer(s.mcp))

	mux.HandleFunc("GET /healthz", s.handleHealth)
	mux.Handle("GET /static/", s.pages.Static())
	mux.HandleFunc("GET /{$}", s.handleHome)
	if s.cfg.TestClock != nil {
		mux.HandleFunc("GET /api/test/clock", s.handleTestClock)
		mux.HandleFunc("POST /api/test/clock", s.handleTestClock)
	}
	mux.methodNotAllowed(s.handleMethodNotAllowed)
	mux.HandleFunc("/", s.handleNotFound)

	return s.withRequestContext(s.toLoopbackBase(mux))
}

type ctxKey int

const requestStateKey ctxKey = iota

// requestState is what the middleware knows about one request, kept behind
// one context value and allocated once: the request id, the principal once
// requireBearer has authenticated it (set in place, so authenticating costs
// no second copy of the request), and the status recorder.
type requestState struct {
	id        string
	idHeader  [1]string // the X-Request-Id header's value slice, allocated with the state
	client    string    // the client's address (trustedProxies.clientAddr), for rate limits
	principal principal
	authed    bool
	rec       statusRecorder
}

func stateFrom(ctx context.Context) *requestState {
	st, _ := ctx.Value(requestStateKey).(*requestState)
	return st
}

// withRequestContext is the outermost middleware: request id, body limit,
// panic recovery and one structured log line per request (never with query
// strings or headers, which carry codes and tokens).
func (s *Server) withRequestContext(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now() // durations for the log and metrics only; no logic reads it
		st := &requestState{id: newRequestID(), client: s.proxies.clientAddr(r)}
		id := st.id
		st.idHeader[0] = id
		w.Header()["X-Request-Id"] = st.idHeader[:1:1]
		r = r.WithContext(context.WithValue(r.Context(), requestStateKey, st))
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		}
		rec := &st.rec
		rec.ResponseWriter = w
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic in handler", "request_id", id, "path", r.URL.Path, "panic", v)
				if !rec.wrote {
					writeOAuthError(rec, newError(http.StatusInternalServerError, errServerError, "internal error"))
				}
			}
			end := time.Now()
			d := end.Sub(start)
			// The mux set r.Pattern on this request: a bounded route label.
			s.metrics.request(r.Pattern, rec.status(), d)
			if s.reqLog != nil && s.reqLog.logRequest(r.Context(), end, id, r.Method, r.URL.Path, rec.status(), d) {
				return
			}
			s.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
				slog.String("request_id", id),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", rec.status()),
				slog.Duration("duration", d),
			)
		}()
		next.ServeHTTP(rec, r)
	})
}

func requestID(ctx context.Context) string {
	if st := stateFrom(ctx); st != nil {
		return st.id
	}
	return ""
}

// newRequestID is 16 hex digits. Request ids correlate log lines; they are
// not secrets, so they come from the runtime's per-thread generator rather
// than a getrandom call.
func newRequestID() string {
	var b [16]byte
	const digits = "0123456789abcdef"
	v := mathrand.Uint64()
	for i := range b {
		b[i] = digits[v>>60]
		v <<= 4
	}
	return string(b[:])
}

type statusRecorder struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.code, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if !r.wrote {
		r.code, r.wrote = http.StatusOK, true
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) status() int {
	if !r.wrote {
		return http.StatusOK
	}
	return r.code
}

// Flush lets streaming responses (MCP over SSE) through the recorder.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// logError records an internal failure with the request id; the client only
// ever sees a generic server_error.
func (s *Server) logError(r *http.Request, msg string, err error) {
	s.log.Error(msg, "request_id", requestID(r.Context()), "path", r.URL.Path, "err", err)
}

func (s *Server) serverError(w http.ResponseWriter, r *http.Request, msg string, err error) {
	s.logError(r, msg, err)
	writeOAuthError(w, newError(http.StatusInternalServerError, errServerError, "internal error"))
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if _, err := s.store.GetClient(r.Context(), "healthz-probe"); err != nil && !isNotFound(err) {
		s.logError(r, "health check: store unreachable", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// handleNotFound answers JSON on the API, OAuth, discovery and MCP paths,
// which programs call, and an HTML page anywhere else, where a person with a
// mistyped or stale link is more likely than a program.
func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	if apiPath(r.URL.Path) {
		writeOAuthError(w, newError(http.StatusNotFound, "not_found", "no such endpoint"))
		return
	}
	s.renderError(w, r, http.StatusNotFound, "Page not found",
		"There is no page at this address. Check the link, or start again from the home page.", "not_found")
}

// apiPath: paths where programs, not people, are the callers.
func apiPath(p string) bool {
	return p == "/mcp" || strings.HasPrefix(p, "/mcp/") || p == "/api" || strings.HasPrefix(p, "/api/") ||
		p == "/oauth" || strings.HasPrefix(p, "/oauth/") || strings.HasPrefix(p, "/.well-known/")
}
