package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpauth/mcpauth/conformance"
	"github.com/mcpauth/mcpauth/conformance/report"
)

// secretGen builds one random run: secrets, the places they travel in (each
// once where its name says it is a secret, then anywhere), and what must
// stay readable.
type secretGen struct {
	rng     *rand.Rand
	secrets []string // at least MinSecretLen: masked wherever they appear
	short   []string // shorter: only ever where their name says they are secrets
	kept    []string // must reach the report as they are
}

var (
	secretMemberNames = []string{"access_token", "refresh_token", "id_token", "registration_access_token", "client_secret", "device_code", "token"}
	secretParamNames  = append([]string{"code", "code_verifier"}, secretMemberNames...)
)

func (g *secretGen) pick(from []string) string { return from[g.rng.IntN(len(from))] }

// chars is n random characters of alphabet.
func (g *secretGen) chars(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.rng.IntN(len(alphabet))]
	}
	return string(b)
}

// word is an ordinary value: lower-case letters, which no secret has.
func (g *secretGen) word() string {
	return "w" + g.chars("abcdefghijklmnopqrstuvwxyz", 5+g.rng.IntN(6))
}

func (g *secretGen) secret() string {
	s := "S" + g.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~+/=-", 7+g.rng.IntN(40))
	g.secrets = append(g.secrets, s)
	return s
}

// shortSecret has no vowel and starts with Q, so no word of a report holds it.
func (g *secretGen) shortSecret() string {
	s := "Q" + g.chars("BCDFGHJKLMNPRSTVWXZ23456789", 2+g.rng.IntN(4))
	g.short = append(g.short, s)
	return s
}

// homed is a secret for a named place: long or, now and then, short.
func (g *secretGen) homed() string {
	if g.rng.IntN(4) == 0 {
		return g.shortSecret()
	}
	return g.secret()
}

// stray is a known long secret for a place that does not name it, or a word.
func (g *secretGen) stray() string {
	if len(g.secrets) == 0 || g.rng.IntN(3) == 0 {
		return g.word()
	}
	return g.pick(g.secrets)
}

// nested is a JSON value with a secret under a secret member at a random
// depth, among ordinary members and strays.
func (g *secretGen) nested() any {
	var v any = map[string]any{g.pick(secretMemberNames): g.homed(), "client_id": g.keep(g.word()), "note": g.stray()}
	for d := g.rng.IntN(5); d > 0; d-- {
		if g.rng.IntN(3) == 0 {
			v = []any{v, g.stray()}
		} else {
			v = map[string]any{g.word(): v, "scope": g.keep(g.word())}
		}
	}
	return v
}

func (g *secretGen) keep(s string) string { g.kept = append(g.kept, s); return s }

// answer is one response: a body of a random kind and type, headers that
// may carry secrets, and a JSON error body whose error and code must stay.
func (g *secretGen) answer(w http.ResponseWriter) {
	h := w.Header()
	if g.rng.IntN(3) == 0 {
		h.Add("Set-Cookie", "sess="+g.homed()+"; Path=/; HttpOnly")
	}
	if g.rng.IntN(3) == 0 {
		h.Set("Location", "http://127.0.0.1:1/cb?code="+url.QueryEscape(g.homed())+"&state="+g.keep(g.word()))
	}
	var body []byte
	ctype := "application/json"
	switch g.rng.IntN(6) {
	case 0: // a wrongful grant with the token nested anywhere
		body, _ = json.Marshal(map[string]any{"access_token": g.homed(), "token_type": "Bearer", "issued": g.nested()})
	case 1: // the same, indented, served as text/plain
		body, _ = json.MarshalIndent(map[string]any{"refresh_token": g.homed(), "grant": g.nested()}, "", "  ")
		ctype = "text/plain"
	case 2: // a form-encoded token answer
		body = []byte(url.Values{g.pick(secretParamNames): {g.homed()}, "token_type": {g.keep(g.word())}}.Encode())
		ctype = g.pick([]string{"application/x-www-form-urlencoded", "text/plain"})
	case 3: // an OAuth error: error and code stay
		code := g.keep(fmt.Sprintf(`"code":%q`, g.word()))
		body = []byte(fmt.Sprintf(`{"error":%q,%s,"detail":%s}`, g.keep(g.word()), code, mustJSON(g.nested())))
	case 4: // a JSON-RPC error, its code a number
		code := g.keep(fmt.Sprintf(`"code":-%d`, 32000+g.rng.IntN(700)))
		body = []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"error":{%s,"message":%q},"data":%s}`, code, g.keep(g.word()), mustJSON(g.nested())))
	default: // a document quoted in another, and prose
		inner := mustJSON(map[string]any{g.pick(secretMemberNames): g.homed()})
		body = []byte(fmt.Sprintf(`{"payload":%q,"text":"%s %s=%s"}`, inner, g.stray(), g.pick(secretParamNames), g.homed()))
	}
	h.Set("Content-Type", ctype)
	_, _ = w.Write(body)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// request sends one request carrying secrets the way the suite does.
func (g *secretGen) request(ctx context.Context, e *conformance.Env) (*conformance.Response, error) {
	path := "/x/" + url.PathEscape(g.stray()) + "?code=" + url.QueryEscape(g.homed()) + "&state=" + g.keep(g.word())
	switch g.rng.IntN(3) {
	case 0:
		return e.PostForm(ctx, path, url.Values{g.pick(secretParamNames): {g.homed()}, "client_id": {g.keep(g.word())}})
	case 1:
		return e.Get(ctx, path, "Authorization", "Bearer "+g.homed(), "Cookie", "sess="+g.homed())
	}
	return e.PostJSON(ctx, path, map[string]any{"grant": g.nested()})
}

// Whatever carries a secret the run obtained (a JSON member at any depth
// of a body of any type, a form, a query, a header, a reason), no report
// format shows it; a JSON error body's error and code, and ordinary
// values, stay as they were.
func FuzzReportRedaction(f *testing.F) {
	for seed := range uint64(64) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		g := &secretGen{rng: rand.New(rand.NewPCG(seed, 7))}
		gen := make(chan func(http.ResponseWriter), 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { (<-gen)(w) }))
		defer srv.Close()
		check := conformance.Check{ID: "FUZZ-01", Title: "secrets stay secret", Area: "fuzz", Run: func(ctx context.Context, e *conformance.Env) error {
			var last *conformance.Response
			for range 1 + g.rng.IntN(5) {
				gen <- g.answer
				r, err := g.request(ctx, e)
				if err != nil {
					return err
				}
				last = r
			}
			// A secret named in the reason only never reached the wire: the
			// run cannot know it, so only a short one is put there.
			return conformance.Fail("want %s, got %s; %s=%s, saw %s and %s", g.keep(g.word()), last.Snippet(), g.pick(secretParamNames), g.shortSecret(), g.stray(), g.stray())
		}}
		apiKey := g.secret()
		rep := conformance.RunChecks(context.Background(), conformance.Target{BaseURL: srv.URL, APIKey: apiKey}, []conformance.Check{check}, conformance.Options{Parallel: 1})
		if got := rep.Results[0].Verdict; got != conformance.VerdictFail {
			t.Fatalf("verdict %s: %s", got, rep.Results[0].Reason)
		}

		outputs := map[string]*bytes.Buffer{"text": {}, "json": {}, "junit": {}, "html": {}}
		for name, write := range map[string]func(*bytes.Buffer) error{
			"text":  func(b *bytes.Buffer) error { return report.WriteText(b, rep, report.TextOptions{}) },
			"json":  func(b *bytes.Buffer) error { return report.WriteJSON(b, rep) },
			"junit": func(b *bytes.Buffer) error { return report.WriteJUnit(b, rep) },
			"html":  func(b *bytes.Buffer) error { return report.WriteHTML(b, rep) },
		} {
			if err := write(outputs[name]); err != nil {
				t.Fatal(err)
			}
		}
		for name, out := range outputs {
			for _, text := range []string{out.String(), html.UnescapeString(out.String())} {
				for _, s := range g.secrets {
					for _, form := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
						if strings.Contains(text, form) {
							t.Fatalf("seed %d: the %s report shows the secret %q:\n%s", seed, name, s, out)
						}
					}
				}
				for _, s := range g.short {
					if strings.Contains(text, s) {
						t.Fatalf("seed %d: the %s report shows the short secret %q:\n%s", seed, name, s, out)
					}
				}
			}
		}
		var whole strings.Builder
		whole.WriteString(rep.Results[0].Reason + "\n")
		for _, x := range rep.Results[0].Exchanges {
			fmt.Fprintln(&whole, x.Text(), x.RequestHeaders, x.ResponseHeaders)
		}
		for _, k := range g.kept {
			if !strings.Contains(whole.String(), k) {
				t.Fatalf("seed %d: %q was redacted:\n%s", seed, k, whole.String())
			}
		}
	})
}
