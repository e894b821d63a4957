package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/mcpauth/mcpauth/server/internal/promtext"
)

// Metrics are the server's Prometheus metrics, on a registry of their own
// (no global one, so two servers in one process, as tests run them, do not
// collide). A nil *Metrics is valid and records nothing:
// every method checks its receiver, so a server without metrics pays one
// nil check per event.
type Metrics struct {
	reg          *promtext.Registry
	requests     *promtext.CounterVec
	duration     *promtext.HistogramVec
	tokens       *promtext.CounterVec
	refreshReuse *promtext.Counter
	rateLimited  *promtext.CounterVec
	store        *promtext.HistogramVec
	// codes[c] is strconv.Itoa(c), made once: formatting a status per
	// request would allocate on the ping path.
	codes [600]string
}

// Label values: grants by their registry label (grants.go), as the
// "access token issued" log line names them; limiters as --limits does.
const (
	limiterDevice    = "device"
	limiterAuthorize = "authorize"
	limiterRegister  = "register"
	limiterUserCode  = "usercode"
	limiterCIMD      = "cimd"
	// Not a rate limit: metadata document fetches refused because every
	// fetch slot stayed taken (503).
	limiterCIMDSlots = "cimd_slots"
)

// NewMetrics builds the metrics and their registry, with the Go runtime's
// and the process's gauges beside them.
func NewMetrics() *Metrics {
	reg := &promtext.Registry{}
	m := &Metrics{
		reg: reg,
		requests: reg.NewCounterVec("mcpauth_http_requests_total",
			"HTTP requests by route pattern (not raw path) and status code.", "route", "code"),
		duration: reg.NewHistogramVec("mcpauth_http_request_duration_seconds",
			"HTTP request latency by route pattern.",
			[]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}, "route"),
		tokens: reg.NewCounterVec("mcpauth_tokens_issued_total",
			"Access tokens issued by grant type.", "grant"),
		refreshReuse: reg.NewCounter("mcpauth_refresh_token_reuse_total",
			"Spent refresh tokens presented again; each revoked its family."),
		rateLimited: reg.NewCounterVec("mcpauth_rate_limited_total",
			"Requests refused by a rate limiter, by limiter.", "limiter"),
		store: reg.NewHistogramVec("mcpauth_store_operation_duration_seconds",
			"Store (database) latency by operation.",
			[]float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1}, "op"),
	}
	for c := range m.codes {
		m.codes[c] = strconv.Itoa(c)
	}
	// Known label values start at zero, so a scrape shows them before the
	// first event and rate() has a series to start from.
	for _, g := range newGrantRegistry() {
		m.tokens.With(g.label)
	}
	for _, l := range []string{limiterDevice, limiterAuthorize, limiterRegister, limiterUserCode, limiterCIMD, limiterCIMDSlots} {
		m.rateLimited.With(l)
	}
	reg.Gauges(promtext.RuntimeGauges)
	reg.Gauges(promtext.ProcessGauges)
	return m
}

// Handler serves the metrics in the Prometheus text format. Serve it on
// its own listener, never on the public one.
func (m *Metrics) Handler() http.Handler { return m.reg.Handler() }

// request records one HTTP request. route is the ServeMux pattern that
// matched, so label values are bounded by the routes table; "" (the mux's
// own redirects) becomes "unmatched".
func (m *Metrics) request(route string, code int, d time.Duration) {
	if m == nil {
		return
	}
	if route == "" {
		route = "unmatched"
	}
	label := "other"
	if code >= 0 && code < len(m.codes) {
		label = m.codes[code]
	}
	m.requests.With(route, label).Inc()
	m.duration.With(route).Observe(d.Seconds())
}

func (m *Metrics) tokenIssued(grant string) {
	if m != nil {
		m.tokens.With(grant).Inc()
	}
}

func (m *Metrics) refreshReused() {
	if m != nil {
		m.refreshReuse.Inc()
	}
}

// rejections returns what a limiter calls when it refuses a request.
func (m *Metrics) rejections(limiter string) func() {
	if m == nil {
		return func() {}
	}
	return m.rateLimited.With(limiter).Inc
}
