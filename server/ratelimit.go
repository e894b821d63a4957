package server

import (
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpauth/mcpauth/server/clock"
)

// Limit is a token bucket: Rate events per second with bursts of Burst.
type Limit struct {
	Rate  float64
	Burst int
}

// Limits are the server's rate limits. They are kept per instance, in
// memory: with several instances behind a balancer each allows its own
// budget (documented in README).
type Limits struct {
	DeviceCodePerIP     Limit // POST /api/oauth/device/code
	AuthorizePerClient  Limit // GET /oauth/authorize
	RegisterPerIP       Limit // POST /oauth/register
	WrongUserCodePerKey Limit // wrong user codes at /auth/device, per session and per IP
	// MetadataFetchPerIP charges every request that would fetch a client
	// metadata document (neither cache knows it), at any endpoint, to its
	// caller's address, before the fetch.
	MetadataFetchPerIP Limit
	// IPv6Prefix is how many leading bits of an IPv6 peer address make one
	// caller ("per IP" above): 0 is DefaultIPv6Prefix (64), 128 counts each
	// address. IPv4 peers are counted by address.
	IPv6Prefix int
	// Disabled turns every limit off (benchmarks only).
	Disabled bool
}

// DefaultLimits generous enough for a conformance run from one address, tight
// enough to stop enumeration of user codes.
func DefaultLimits() Limits {
	return Limits{
		DeviceCodePerIP:     Limit{Rate: 1, Burst: 60},
		AuthorizePerClient:  Limit{Rate: 2, Burst: 120},
		RegisterPerIP:       Limit{Rate: 1, Burst: 60},
		WrongUserCodePerKey: Limit{Rate: 1.0 / 30, Burst: 10},
		MetadataFetchPerIP:  Limit{Rate: 0.5, Burst: 20},
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	fill := func(v *Limit, def Limit) {
		if v.Rate <= 0 || v.Burst <= 0 {
			*v = def
		}
	}
	fill(&l.DeviceCodePerIP, d.DeviceCodePerIP)
	fill(&l.AuthorizePerClient, d.AuthorizePerClient)
	fill(&l.RegisterPerIP, d.RegisterPerIP)
	fill(&l.WrongUserCodePerKey, d.WrongUserCodePerKey)
	fill(&l.MetadataFetchPerIP, d.MetadataFetchPerIP)
	if l.IPv6Prefix == 0 {
		l.IPv6Prefix = DefaultIPv6Prefix
	}
	return l
}

type limiters struct {
	deviceCode, authorize, register, wrongUserCode, cimdFetch *keyedLimiter
	ipv6Prefix                                                int
}

// caller is the key a client address (clientAddr) is charged to
// (callerKey). Forwarding headers count only from Config.TrustedProxies:
// behind a proxy not listed, every client shares the proxy's budget.
func (l *limiters) caller(peer string) string { return callerKey(peer, l.ipv6Prefix) }

func newLimiters(l Limits, clk clock.Clock, m *Metrics) *limiters {
	mk := func(v Limit, name string) *keyedLimiter {
		return &keyedLimiter{limit: v, clock: clk, disabled: l.Disabled, m: map[string]*rate.Limiter{}, rejected: m.rejections(name)}
	}
	return &limiters{
		deviceCode:    mk(l.DeviceCodePerIP, limiterDevice),
		authorize:     mk(l.AuthorizePerClient, limiterAuthorize),
		register:      mk(l.RegisterPerIP, limiterRegister),
		wrongUserCode: mk(l.WrongUserCodePerKey, limiterUserCode),
		cimdFetch:     mk(l.MetadataFetchPerIP, limiterCIMD),
		ipv6Prefix:    l.IPv6Prefix,
	}
}

// keyedLimiter keeps one token bucket per key, reading time from the
// injected clock so tests can refill buckets by moving time.
type keyedLimiter struct {
	mu       sync.Mutex
	limit    Limit
	clock    clock.Clock
	disabled bool
	m        map[string]*rate.Limiter
	rejected func() // counts refusals (metrics); never nil
}

// maxKeys bounds the map; full buckets are dropped first, since forgetting a
// full bucket changes nothing.
const maxKeys = 10000

func (k *keyedLimiter) get(key string) (*rate.Limiter, time.Time) {
	now := k.clock.Now()
	l, ok := k.m[key]
	if !ok {
		if len(k.m) >= maxKeys {
			k.prune(now)
		}
		l = rate.NewLimiter(rate.Limit(k.limit.Rate), k.limit.Burst)
		k.m[key] = l
	}
	return l, now
}

func (k *keyedLimiter) prune(now time.Time) {
	for key, l := range k.m {
		if l.TokensAt(now) >= float64(k.limit.Burst) {
			delete(k.m, key)
		}
	}
	if len(k.m) >= maxKeys { // everyone is busy: start over rather than grow
		clear(k.m)
	}
}

// Allow takes one token for key. When none is left it returns false and how
// long until one will be.
func (k *keyedLimiter) Allow(key string) (bool, time.Duration) {
	if k.disabled {
		return true, 0
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	l, now := k.get(key)
	if l.AllowN(now, 1) {
		return true, 0
	}
	k.rejected()
	return false, k.wait(l, now)
}

// byCaller charges the caller to k before next runs; over the limit it
// answers rate_limited (429 with Retry-After) without reading the request.
func (l *limiters) byCaller(k *keyedLimiter, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ok, wait := k.Allow(l.caller(clientAddr(r))); !ok {
			writeOAuthError(w, rateLimited(wait))
			return
		}
		next(w, r)
	}
}

// Charge takes one token from every key, all or none, before the attempt
// is judged, and returns refund to give them back when it turns out free
// (a correct user code). Checking first and charging later let concurrent
// attempts all pass the check before any was charged.
func (k *keyedLimiter) Charge(keys ...string) (ok bool, wait time.Duration, refund func()) {
	if k.disabled {
		return true, 0, func() {}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.clock.Now()
	taken := make([]*rate.Reservation, 0, len(keys))
	// CancelAt restores a reservation only when given a time not after the
	// one it was made at, so refunds use now, whenever they happen.
	undo := func() {
		for _, r := range taken {
			r.CancelAt(now)
		}
	}
	for _, key := range keys {
		l, _ := k.get(key)
		r := l.ReserveN(now, 1)
		if !r.OK() {
			undo()
			k.rejected()
			return false, k.wait(l, now), nil
		}
		if d := r.DelayFrom(now); d > 0 {
			r.CancelAt(now)
			undo()
			k.rejected()
			return false, d, nil
		}
		taken = append(taken, r)
	}
	return true, 0, func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		undo()
	}
}

func (k *keyedLimiter) wait(l *rate.Limiter, now time.Time) time.Duration {
	missing := 1 - l.TokensAt(now)
	return time.Duration(missing / k.limit.Rate * float64(time.Second))
}
