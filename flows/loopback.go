package flows

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/mcpauth/mcpauth/internal/oauthwire"
)

// callbackPath is the path of the loopback redirect URI.
const callbackPath = "/callback"

// callbackWant is what an authorization response must match.
type callbackWant struct {
	State string // the state sent in the request
	// Issuer is the expected RFC 9207 iss; checked whenever iss is present.
	Issuer string
	// RequireIss makes a missing iss an error (the server advertised
	// authorization_response_iss_parameter_supported).
	RequireIss bool
}

// checkCallback validates the query of an authorization response (RFC 6749
// §4.1.2) and returns the code. The state is compared, in constant time,
// before anything else is read. Errors: ErrStateMismatch, ErrIssuerMismatch,
// or the *OAuthError the server sent.
func checkCallback(q url.Values, c callbackWant) (string, error) {
	state := q.Get("state")
	if c.State == "" || subtle.ConstantTimeCompare([]byte(state), []byte(c.State)) != 1 {
		return "", ErrStateMismatch
	}
	// RFC 9207 §2.4: simple string comparison.
	if iss, ok := q["iss"]; ok {
		if len(iss) != 1 || iss[0] != c.Issuer {
			return "", fmt.Errorf("authorization response iss %q, expected %q: %w", q.Get("iss"), c.Issuer, ErrIssuerMismatch)
		}
	} else if c.RequireIss {
		return "", fmt.Errorf("authorization response has no iss, which the server advertises: %w", ErrIssuerMismatch)
	}
	if e := q.Get("error"); e != "" {
		return "", &OAuthError{Code: e, Description: q.Get("error_description"), URI: q.Get("error_uri")}
	}
	code := q.Get("code")
	if code == "" {
		return "", &OAuthError{Code: "invalid_request", Description: "authorization response has neither code nor error"}
	}
	return code, nil
}

// loopback is the RFC 8252 §7.3 loopback redirect listener, bound to
// 127.0.0.1. Requests to other paths or with a wrong state get a 400 page and
// are otherwise ignored, so a stray or forged request cannot end a login.
type loopback struct {
	ln      net.Listener
	srv     *http.Server
	reqs    chan callbackReq
	done    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	ignored int
	start   string // where LoopbackStartPath redirects: the authorization URL
}

// SetStart makes oauthwire.LoopbackStartPath redirect to authURL.
func (l *loopback) SetStart(authURL string) {
	l.mu.Lock()
	l.start = authURL
	l.mu.Unlock()
}

// StartURL is http://127.0.0.1:{port}/start.
func (l *loopback) StartURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", l.Port(), oauthwire.LoopbackStartPath)
}

type callbackReq struct {
	query url.Values
	reply chan page
}

// listenLoopback listens on 127.0.0.1:port (0 picks a free port) and serves
// the callback until Close.
func listenLoopback(port int) (*loopback, error) {
	ln, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, fmt.Errorf("loopback listener on port %d: %w", port, err)
	}
	l := &loopback{ln: ln, reqs: make(chan callbackReq), done: make(chan struct{})}
	l.srv = &http.Server{Handler: l, ReadHeaderTimeout: 10 * time.Second}
	go l.srv.Serve(ln) //nolint:errcheck // returns ErrServerClosed on Close
	return l, nil
}

// Port returns the port listened on.
func (l *loopback) Port() int { return l.ln.Addr().(*net.TCPAddr).Port }

// RedirectURI returns http://127.0.0.1:{port}/callback.
func (l *loopback) RedirectURI() string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", l.Port(), callbackPath)
}

// Ignored returns how many callbacks were ignored for a wrong state.
func (l *loopback) Ignored() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ignored
}

// Wait returns the code of the first callback that passes checkCallback, or
// the error of the first one that fails for another reason than its state.
// It returns ctx.Err() when ctx ends first. Callbacks arriving while no Wait
// runs are held until the next Wait or Close.
func (l *loopback) Wait(ctx context.Context, c callbackWant) (string, error) {
	code, finish, err := l.waitHeld(ctx, c)
	if err == nil {
		finish(signedInPage("", ""))
	}
	return code, err
}

// waitHeld is Wait that leaves the browser waiting after a good callback:
// the caller answers it through finish (exactly once), so the page can say
// how the login ended after the code exchange.
func (l *loopback) waitHeld(ctx context.Context, c callbackWant) (string, func(page), error) {
	for {
		select {
		case <-ctx.Done():
			return "", nil, ctx.Err()
		case r := <-l.reqs:
			code, err := checkCallback(r.query, c)
			switch {
			case errors.Is(err, ErrStateMismatch):
				l.mu.Lock()
				l.ignored++
				l.mu.Unlock()
				r.reply <- page{Status: http.StatusBadRequest, Title: "Request ignored",
					Message: "This response does not belong to the login in progress (state mismatch)."}
				continue
			case err != nil:
				r.reply <- failurePage(err)
				return "", nil, err
			}
			return code, func(p page) { r.reply <- p }, nil
		}
	}
}

func failurePage(err error) page {
	p := page{Status: http.StatusBadRequest, Title: "Sign-in failed", Message: "mcpauth could not complete the login."}
	var oe *OAuthError
	if errors.As(err, &oe) {
		p.Code, p.Detail = oe.Code, oe.Description
	} else {
		p.Detail = err.Error()
	}
	return p
}

// ServeHTTP hands callbacks to Wait and writes the page Wait chooses.
func (l *loopback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == oauthwire.LoopbackStartPath && r.Method == http.MethodGet {
		l.mu.Lock()
		start := l.start
		l.mu.Unlock()
		if start != "" {
			http.Redirect(w, r, start, http.StatusFound)
			return
		}
	}
	if r.URL.Path != callbackPath || r.Method != http.MethodGet {
		writePage(w, page{Status: http.StatusBadRequest, Title: "Not found", Message: "This is mcpauth's login listener."})
		return
	}
	req := callbackReq{query: r.URL.Query(), reply: make(chan page, 1)}
	select {
	case l.reqs <- req:
		select {
		case p := <-req.reply:
			writePage(w, p)
		case <-l.done:
			// A reply sent just before Close still wins.
			select {
			case p := <-req.reply:
				writePage(w, p)
			default:
				writePage(w, page{Status: http.StatusBadRequest, Title: "Login over", Message: "mcpauth stopped before this login finished; see the terminal."})
			}
		}
	case <-l.done:
		writePage(w, page{Status: http.StatusBadRequest, Title: "Login over", Message: "No login is waiting for this response."})
	case <-r.Context().Done():
	}
}

// Close stops the listener, letting a page being written finish.
func (l *loopback) Close() error {
	var err error
	l.once.Do(func() {
		close(l.done)
		// Bounded grace for in-flight pages; wall-clock I/O, not flow logic.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err = l.srv.Shutdown(ctx)
	})
	return err
}
