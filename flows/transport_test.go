package flows_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpauth/mcpauth/flows"
)

// fakeSource hands out tokens in turn: each Renew moves to the next, and
// records why it was asked.
type fakeSource struct {
	mu     sync.Mutex
	tokens []string
	dpop   *flows.DPoP
	asked  []flows.Refusal
	err    error // Renew's answer, when set
}

func (s *fakeSource) Credential(context.Context) (flows.Credential, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return flows.Credential{Token: s.tokens[0], DPoP: s.dpop}, nil
}

func (s *fakeSource) Renew(_ context.Context, _ flows.Credential, r flows.Refusal) (flows.Credential, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, r)
	if s.err != nil {
		return flows.Credential{}, false, s.err
	}
	if len(s.tokens) == 1 {
		return flows.Credential{Token: s.tokens[0]}, false, nil
	}
	s.tokens = s.tokens[1:]
	return flows.Credential{Token: s.tokens[0], DPoP: s.dpop}, true, nil
}

// resource accepts only the token want, and records what each request
// carried.
type resource struct {
	mu     sync.Mutex
	want   string
	refuse func(w http.ResponseWriter) // the refusal of any other token
	seen   []string                    // Authorization, then the body
}

func (r *resource) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.seen = append(r.seen, req.Header.Get("Authorization")+" "+string(body))
	r.mu.Unlock()
	if req.Header.Get("Authorization") != "Bearer "+r.want {
		r.refuse(w)
		return
	}
	io.WriteString(w, "ok")
}

func post(t *testing.T, tr *flows.Transport, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader("the-body"))
	if err != nil {
		t.Fatal(err)
	}
	req.GetBody = nil // the transport keeps the body itself
	return tr.Client(nil).Do(req)
}

func origin(t *testing.T, raw string) flows.Origin {
	t.Helper()
	o, err := flows.OriginOf(raw)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// A 401 invalid_token: one renewal, the same request again with its body.
func TestTransportRenewsOnceOn401(t *testing.T) {
	res := &resource{want: "t2", refuse: func(w http.ResponseWriter) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		w.WriteHeader(http.StatusUnauthorized)
	}}
	srv := httptest.NewServer(res)
	defer srv.Close()
	src := &fakeSource{tokens: []string{"t1", "t2"}}
	resp, err := post(t, &flows.Transport{Origin: origin(t, srv.URL), Source: src}, srv.URL+"/mcp")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	if want := []string{"Bearer t1 the-body", "Bearer t2 the-body"}; strings.Join(res.seen, "|") != strings.Join(want, "|") {
		t.Errorf("sent %q, want %q", res.seen, want)
	}
	if len(src.asked) != 1 || src.asked[0].Why != flows.RenewInvalid {
		t.Errorf("renewals %+v, want one for invalid_token", src.asked)
	}

	// A resource that refuses every token: renewed once, not again.
	res.want, src.tokens, src.asked, res.seen = "never", []string{"a", "b", "c"}, nil, nil
	resp, err = post(t, &flows.Transport{Origin: origin(t, srv.URL), Source: src}, srv.URL+"/mcp")
	if err != nil || resp.StatusCode != http.StatusUnauthorized || len(res.seen) != 2 || len(src.asked) != 1 {
		t.Fatalf("%v %v: %d sent, %d renewals", resp, err, len(res.seen), len(src.asked))
	}
	resp.Body.Close()
}

// A Bearer-only resource refusing a DPoP-bound token asks for a Bearer
// token; a failed renewal is the request's error, or, with OnRenewError,
// is told and the refusal passed on.
func TestTransportBearerOnlyAndFailedRenewal(t *testing.T) {
	res := &resource{want: "bearer", refuse: func(w http.ResponseWriter) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	}}
	srv := httptest.NewServer(res)
	defer srv.Close()
	key, err := flows.NewDPoP(nil)
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refresh refused")
	src := &fakeSource{tokens: []string{"bound"}, dpop: key, err: refused}
	_, err = post(t, &flows.Transport{Origin: origin(t, srv.URL), Source: src}, srv.URL+"/mcp")
	var re *flows.RenewalError
	if !errors.As(err, &re) || !errors.Is(err, refused) || re.Why != flows.RenewBearerOnly {
		t.Fatalf("err %v, want the renewal's, for a Bearer-only refusal", err)
	}
	if !strings.HasPrefix(res.seen[0], "DPoP bound") {
		t.Errorf("sent %q, want the DPoP scheme", res.seen[0])
	}
	var told error
	tr := &flows.Transport{Origin: origin(t, srv.URL), Source: src, OnRenewError: func(_ flows.Refusal, err error) { told = err }}
	resp, err := post(t, tr, srv.URL+"/mcp")
	if err != nil || resp.StatusCode != http.StatusUnauthorized || told != refused {
		t.Fatalf("%v %v, told %v", resp, err, told)
	}
	resp.Body.Close()
}

// A 403 insufficient_scope asks the source to step up, for the scope the
// challenge names, and no more than StepUps times for a request however
// often the source says yes.
func TestTransportStepUpIsBounded(t *testing.T) {
	res := &resource{want: "never", refuse: func(w http.ResponseWriter) {
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="files:read"`)
		w.WriteHeader(http.StatusForbidden)
	}}
	srv := httptest.NewServer(res)
	defer srv.Close()
	src := &fakeSource{tokens: []string{"a", "b", "c", "d", "e", "f", "g"}}
	resp, err := post(t, &flows.Transport{Origin: origin(t, srv.URL), Source: src, StepUps: flows.DefaultMaxStepUps + 1}, srv.URL+"/mcp")
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	if n := len(src.asked); n != flows.DefaultMaxStepUps+1 || src.asked[0].Why != flows.RenewScope || src.asked[0].Required != "files:read" {
		t.Errorf("step-ups %+v, want %d for files:read", src.asked, flows.DefaultMaxStepUps+1)
	}
}

// The credential goes to its origin only: another origin is refused
// before the source is asked, and a redirect there is not followed.
func TestTransportKeepsTheOrigin(t *testing.T) {
	var elsewhere int
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere++ }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	src := &fakeSource{tokens: []string{"secret"}}
	tr := &flows.Transport{Origin: origin(t, srv.URL), Source: src}
	if _, err := post(t, tr, other.URL+"/mcp"); !errors.Is(err, flows.ErrCrossOrigin) {
		t.Errorf("to another origin: %v", err)
	}
	var redirect *flows.RedirectError
	if _, err := tr.Client(nil).Get(srv.URL + "/mcp"); !errors.As(err, &redirect) {
		t.Errorf("redirect to another origin: %v", err)
	}
	if elsewhere != 0 {
		t.Errorf("the other origin got %d request(s)", elsewhere)
	}
}
