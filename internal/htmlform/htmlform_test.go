package htmlform_test

import (
	"net/url"
	"testing"

	"github.com/mcpauth/mcpauth/internal/htmlform"
)

func TestParse(t *testing.T) {
	page, _ := url.Parse("https://svc.example/oauth/authorize?x=1")
	body := []byte(`<html><body>
<form id=a method=POST action="/oauth/authorize">
  <input type=hidden name=csrf_token value="tok&amp;1">
  <input type=hidden name=state value=s>
  <input type=checkbox name=remember checked>
  <input type=checkbox name=unchecked value=x>
  <input type=text name=user_code>
  <textarea name=note>hi</textarea>
  <select name=pick><option value=a>A<option value=b selected>B</select>
  <button type=submit name=action value=approve>Approve</button>
  <button name=action value=deny>Deny</button>
  <button type=button name=noise value=x>x</button>
</form>
<form><input type=submit name=go value=regenerate></form>
</body></html>`)
	p, err := htmlform.Parse(page, body)
	if err != nil {
		t.Fatal(err)
	}
	forms := p.Forms
	if len(forms) != 2 {
		t.Fatalf("got %d forms, want 2", len(forms))
	}
	f := forms[0]
	if f.Method != "POST" || f.Action.String() != "https://svc.example/oauth/authorize" {
		t.Errorf("form 1: %s %s", f.Method, f.Action)
	}
	b, ok := f.Button("deny")
	if !ok {
		t.Fatal("no deny button")
	}
	got := f.Submission(b, map[string]string{"user_code": "ABCD-1234"})
	want := url.Values{"csrf_token": {"tok&1"}, "state": {"s"}, "remember": {"on"}, "user_code": {"ABCD-1234"},
		"note": {"hi"}, "pick": {"b"}, "action": {"deny"}}
	if got.Encode() != want.Encode() {
		t.Errorf("submission:\n got %s\nwant %s", got.Encode(), want.Encode())
	}
	if g := forms[1]; g.Method != "GET" || g.Action.String() != page.String() {
		t.Errorf("form 2 defaults: %s %s", g.Method, g.Action)
	}
	if b, ok := forms[1].Button("regenerate"); !ok || b.Name != "go" {
		t.Errorf("input type=submit not taken as a button: %+v", forms[1].Buttons)
	}
	if k := p.APIKey(); k != "" {
		t.Errorf("found a key where there is none: %q", k)
	}
	for _, html := range []string{`<p>Key: <code id="api-key"> mcpa_abc </code></p>`, `<div data-api-key="mcpa_abc"></div>`, `<input id=api-key value=mcpa_abc>`} {
		p, _ := htmlform.Parse(page, []byte(html))
		if k := p.APIKey(); k != "mcpa_abc" {
			t.Errorf("APIKey(%s) = %q", html, k)
		}
	}
}

// Links resolve against the page and carry their text; an <a> without
// href is no link.
func TestParseLinks(t *testing.T) {
	page, _ := url.Parse("https://as.example/interaction/abc")
	p, err := htmlform.Parse(page, []byte(`<p><a href="abc/abort">[ <b>Cancel</b> ]</a> <a name=top>top</a> <a href="https://other.example/tos">Terms</a></p>`))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Links) != 2 {
		t.Fatalf("got %d links, want 2: %+v", len(p.Links), p.Links)
	}
	if l := p.Links[0]; l.URL.String() != "https://as.example/interaction/abc/abort" || l.Label != "[ Cancel ]" {
		t.Errorf("first link: %s %q", l.URL, l.Label)
	}
	if l := p.Links[1]; l.URL.String() != "https://other.example/tos" || l.Label != "Terms" {
		t.Errorf("second link: %s %q", l.URL, l.Label)
	}
}
