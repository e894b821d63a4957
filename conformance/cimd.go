package conformance

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// DocumentHost serves the suite's Client ID Metadata Documents over TLS on a
// loopback listener it starts; the suite never names any other host to the
// target. A target can fetch them only when it allows loopback addresses
// (mcpauth serve --cimd-allow-private, Target.CIMDPrivate) and trusts the
// host's certificate (CertPool, or a certificate given to NewDocumentHost).
type DocumentHost struct {
	url   string
	pool  *x509.CertPool
	srv   *http.Server
	conns atomic.Int64

	mu   sync.Mutex
	docs map[string]docResponse
	hits map[string]int
}

type docResponse struct {
	status      int
	contentType string
	location    string
	body        []byte
}

// NewDocumentHost starts a document host on 127.0.0.1. With cert nil it
// makes a self-signed certificate for 127.0.0.1, valid for a day, which
// CertPool returns for the target to trust.
func NewDocumentHost(cert *tls.Certificate) (*DocumentHost, error) {
	h := &DocumentHost{docs: map[string]docResponse{}, hits: map[string]int{}, pool: x509.NewCertPool()}
	if cert == nil {
		c, leaf, err := selfSigned()
		if err != nil {
			return nil, fmt.Errorf("document host certificate: %w", err)
		}
		cert = c
		h.pool.AddCert(leaf)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("document host: %w", err)
	}
	h.url = "https://" + ln.Addr().String()
	h.srv = &http.Server{
		Handler:           http.HandlerFunc(h.serveHTTP),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12},
		ErrorLog:          log.New(io.Discard, "", 0), // handshakes a target refuses are expected
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				h.conns.Add(1)
			}
		},
	}
	go func() { _ = h.srv.ServeTLS(ln, "", "") }()
	return h, nil
}

// URL is the host's origin, https://127.0.0.1:port.
func (h *DocumentHost) URL() string { return h.url }

// CertPool holds the self-signed certificate the host made (empty when it
// was given one).
func (h *DocumentHost) CertPool() *x509.CertPool { return h.pool }

// Close stops the host.
func (h *DocumentHost) Close() error { return h.srv.Close() }

// connections counts the TCP connections the host has accepted.
func (h *DocumentHost) connections() int64 { return h.conns.Load() }

func (h *DocumentHost) serveHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	d, ok := h.docs[r.URL.Path]
	h.hits[r.URL.Path]++
	h.mu.Unlock()
	if !ok || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	if d.location != "" {
		w.Header().Set("Location", d.location)
	}
	w.Header().Set("Content-Type", d.contentType)
	w.WriteHeader(d.status)
	_, _ = w.Write(d.body)
}

// publish serves d at a fresh path and returns its URL: a fresh URL per
// check, so no server cache carries one check's document into another.
func (h *DocumentHost) publish(d docResponse) string {
	path := "/cimd/" + randomString(9) + "/client.json"
	h.mu.Lock()
	h.docs[path] = d
	h.mu.Unlock()
	return h.url + path
}

func (h *DocumentHost) hitsOf(rawURL string) int {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[u.Path]
}

func selfSigned() (*tls.Certificate, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "mcpauth conformance document host"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, leaf, nil
}

// documents returns the target's document host, or the run's own, started
// on first use and stopped when the run ends.
func (e *Env) documents(ctx context.Context) (*DocumentHost, error) {
	if e.target.Documents != nil {
		return e.target.Documents, nil
	}
	h, err := e.run.docs.get(ctx, func(context.Context) (*DocumentHost, error) { return NewDocumentHost(nil) })
	if err != nil {
		return nil, setupFail("starting the document host", err)
	}
	return h, nil
}

// clientDocument is a valid metadata document for id with the suite's
// loopback redirect URI.
func clientDocument(id string) map[string]any {
	return map[string]any{
		"client_id":                  id,
		"client_name":                "mcpauth conformance (metadata document)",
		"redirect_uris":              []string{loopbackRedirect},
		"grant_types":                []string{"authorization_code"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
		"application_type":           "native",
	}
}

// publishDocument serves the document edit makes of a valid one (given its
// future URL) as JSON, and returns its URL.
func (e *Env) publishDocument(ctx context.Context, edit func(id string, doc map[string]any)) (string, *DocumentHost, error) {
	h, err := e.documents(ctx)
	if err != nil {
		return "", nil, err
	}
	// Reserve the path first: the document names its own URL.
	id := h.publish(docResponse{status: http.StatusNotFound, contentType: "text/plain"})
	doc := clientDocument(id)
	if edit != nil {
		edit(id, doc)
	}
	b, _ := json.Marshal(doc)
	h.replace(id, docResponse{status: http.StatusOK, contentType: "application/json", body: b})
	return id, h, nil
}

func (h *DocumentHost) replace(rawURL string, d docResponse) {
	u, _ := url.Parse(rawURL)
	h.mu.Lock()
	h.docs[u.Path] = d
	h.mu.Unlock()
}

// authorizeAs sends the authorization request of metadata document client id
// for redirectURI, without a session.
func (e *Env) authorizeAs(ctx context.Context, id, redirectURI string) (*Response, error) {
	a, err := e.newAuthRequest(id, redirectURI)
	if err != nil {
		return nil, err
	}
	r, _, err := e.getAuthorize(ctx, a.Query, false)
	return r, err
}

// documentRefused is a check that an authorization request naming the
// document serve publishes gets the error page, never a redirect.
func documentRefused(id, title, source string, serve func(ctx context.Context, e *Env) (string, error)) Check {
	return Check{
		ID: id, Title: title, Area: "cimd", Source: source, Needs: []Need{NeedCIMDPrivate},
		Run: func(ctx context.Context, e *Env) error {
			cid, err := serve(ctx, e)
			if err != nil {
				return err
			}
			r, err := e.authorizeAs(ctx, cid, loopbackRedirect)
			if err != nil {
				return err
			}
			return wantErrorPage(r)
		},
	}
}

const (
	srcCIMD      = "MCP authorization 2026-07-28 §Client ID Metadata Documents via " + src2026 + " (Client ID Metadata Documents)"
	srcCIMDGuard = "MCP security best practices (SSRF); RFC 9700 §4.16 via " + src2026 + " (SSRF guard)"
)

func cimdChecks() []Check {
	return []Check{
		{
			ID: "CIMD-01", Title: "a valid metadata document URL is accepted as client_id (consent or login, no error)", Area: "cimd",
			Source: srcCIMD, Needs: []Need{NeedCIMDPrivate},
			Run: func(ctx context.Context, e *Env) error {
				cid, h, err := e.publishDocument(ctx, nil)
				if err != nil {
					return err
				}
				r, err := e.authorizeAs(ctx, cid, loopbackRedirect)
				if err != nil {
					return err
				}
				if h.hitsOf(cid) == 0 {
					return Fail("the target never fetched the document at %s (is it running with --cimd-allow-private and trusting the document host?)", cid)
				}
				if r.Status == 200 {
					return nil
				}
				u, err := location(r)
				if err != nil || !e.isLoginRedirect(u) {
					return Fail("want the consent page or a redirect to login, got %s %s", r.Snippet(), r.Header.Get("Location"))
				}
				return nil
			},
		},
		{
			ID: "CIMD-02", Title: "a metadata document client completes the code flow and its token works", Area: "cimd",
			Source: srcCIMD, Needs: []Need{NeedCIMDPrivate, NeedApproval},
			Run: func(ctx context.Context, e *Env) error {
				cid, _, err := e.publishDocument(ctx, nil)
				if err != nil {
					return err
				}
				_, r, err := e.exchangeFor(ctx, cid, "mcp")
				if err != nil {
					return err
				}
				tok, err := accessToken(r)
				if err != nil {
					return Fail("exchanging the code as %s: %v", cid, err)
				}
				return e.wantWorks(ctx, tok, "the metadata document client's token")
			},
		},
		documentRefused("CIMD-03", "a document whose client_id is not its own URL is refused", srcCIMD,
			func(ctx context.Context, e *Env) (string, error) {
				cid, _, err := e.publishDocument(ctx, func(id string, doc map[string]any) { doc["client_id"] = id + "x" })
				return cid, err
			}),
		{
			ID: "CIMD-04", Title: "a redirect_uri the document does not list is refused without redirecting", Area: "cimd",
			Source: srcCIMD + "; RFC 9700 §4.1", Needs: []Need{NeedCIMDPrivate},
			Run: func(ctx context.Context, e *Env) error {
				cid, _, err := e.publishDocument(ctx, nil)
				if err != nil {
					return err
				}
				r, err := e.authorizeAs(ctx, cid, "https://attacker.example/callback")
				if err != nil {
					return err
				}
				return wantErrorPage(r)
			},
		},
		documentRefused("CIMD-05", "a document that is not JSON (served as text/html, or an unparsable body) is refused", srcCIMD,
			func(ctx context.Context, e *Env) (string, error) {
				h, err := e.documents(ctx)
				if err != nil {
					return "", err
				}
				// The first with the right body but the wrong type; the
				// check sends the second, so try the first here.
				typed := h.publish(docResponse{status: 200, contentType: "text/html"})
				b, _ := json.Marshal(clientDocument(typed))
				h.replace(typed, docResponse{status: 200, contentType: "text/html", body: b})
				r, err := e.authorizeAs(ctx, typed, loopbackRedirect)
				if err != nil {
					return "", err
				}
				if err := wantErrorPage(r); err != nil {
					return "", Fail("a document served as text/html: %v", err)
				}
				return h.publish(docResponse{status: 200, contentType: "application/json", body: []byte(`<html>not json</html>`)}), nil
			}),
		{
			ID: "CIMD-06", Title: "a document URL that redirects is refused, and the redirect is not followed", Area: "cimd",
			Source: srcCIMD, Needs: []Need{NeedCIMDPrivate},
			Run: func(ctx context.Context, e *Env) error {
				target, h, err := e.publishDocument(ctx, nil)
				if err != nil {
					return err
				}
				cid := h.publish(docResponse{status: http.StatusFound, contentType: "text/plain", location: target})
				// The redirect target's document names itself; make the one
				// at the redirect valid for cid, so only following it helps.
				b, _ := json.Marshal(clientDocument(cid))
				h.replace(target, docResponse{status: 200, contentType: "application/json", body: b})
				r, err := e.authorizeAs(ctx, cid, loopbackRedirect)
				if err != nil {
					return err
				}
				if err := wantErrorPage(r); err != nil {
					return err
				}
				if n := h.hitsOf(target); n > 0 {
					return Fail("the target followed the redirect to %s", target)
				}
				return nil
			},
		},
		{
			ID: "CIMD-07", Title: "a document on a loopback address is refused and never fetched (SSRF guard)", Area: "cimd",
			Source: srcCIMDGuard,
			Run: func(ctx context.Context, e *Env) error {
				if e.target.CIMDPrivate {
					return Skip("the target fetches documents from private addresses (--cimd-private), so its SSRF guard cannot be seen")
				}
				cid, h, err := e.publishDocument(ctx, nil)
				if err != nil {
					return err
				}
				before := h.connections()
				r, err := e.authorizeAs(ctx, cid, loopbackRedirect)
				if err != nil {
					return err
				}
				if n := h.connections() - before; n > 0 {
					return Fail("the target connected to the loopback document host %s (%d connections): it fetches documents from internal addresses", h.URL(), n)
				}
				return wantErrorPage(r)
			},
		},
		documentRefused("CIMD-08", "a document declaring a client secret or a secret-based auth method is refused", srcCIMD,
			func(ctx context.Context, e *Env) (string, error) {
				cid, _, err := e.publishDocument(ctx, func(_ string, doc map[string]any) {
					doc["token_endpoint_auth_method"] = "client_secret_basic"
					doc["client_secret"] = "conformance-" + randomString(8)
				})
				return cid, err
			}),
	}
}
