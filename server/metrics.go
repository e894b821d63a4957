package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the server's Prometheus metrics, on a registry of their own
// (never the global default one, so two servers in one process, as tests
// run them, do not collide). A nil *Metrics is valid and records nothing:
// every method checks its receiver, so a server without metrics pays one
// nil check per event.
type Metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	tokens       *prometheus.CounterVec
	refreshReuse prometheus.Counter
	rateLimited  *prometheus.CounterVec
	store        *prometheus.HistogramVec
	// codes[c] is strconv.Itoa(c), made once: formatting a status per
	// request would allocate on the ping path.
	codes [600]string
}

// Label values: grants as the "access token issued" log line names them,
// limiters as --limits does.
const (
	metricGrantCode    = "authorization_code"
	metricGrantDevice  = "device_code"
	metricGrantRefresh = "refresh_token"

	limiterDevice    = "device"
	limiterAuthorize = "authorize"
	limiterRegister  = "register"
	limiterUserCode  = "usercode"
)

// NewMetrics builds the metrics and their registry, with the Go runtime and
// process collectors beside them.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpauth_http_requests_total",
			Help: "HTTP requests by route pattern (not raw path) and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcpauth_http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpauth_tokens_issued_total",
			Help: "Access tokens issued by grant type.",
		}, []string{"grant"}),
		refreshReuse: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpauth_refresh_token_reuse_total",
			Help: "Spent refresh tokens presented again; each revoked its family.",
		}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpauth_rate_limited_total",
			Help: "Requests refused by a rate limiter, by limiter.",
		}, []string{"limiter"}),
		store: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcpauth_store_operation_duration_seconds",
			Help:    "Store (database) latency by operation.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
		}, []string{"op"}),
	}
	for c := range m.codes {
		m.codes[c] = strconv.Itoa(c)
	}
	// Known label values start at zero, so a scrape shows them before the
	// first event and rate() has a series to start from.
	for _, g := range []string{metricGrantCode, metricGrantDevice, metricGrantRefresh} {
		m.tokens.WithLabelValues(g)
	}
	for _, l := range []string{limiterDevice, limiterAuthorize, limiterRegister, limiterUserCode} {
		m.rateLimited.WithLabelValues(l)
	}
	m.reg.MustRegister(m.requests, m.duration, m.tokens, m.refreshReuse, m.rateLimited, m.store,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus exposition format. Serve it
// on its own listener, never on the public one.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

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
	m.requests.WithLabelValues(route, label).Inc()
	m.duration.WithLabelValues(route).Observe(d.Seconds())
}

func (m *Metrics) tokenIssued(grant string) {
	if m != nil {
		m.tokens.WithLabelValues(grant).Inc()
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
	c := m.rateLimited.WithLabelValues(limiter)
	return c.Inc
}
