package flows

import (
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/http"
	"sync"
)

// pageStyle is the look of the reference server's pages (server/pages/static),
// inlined: the loopback listener serves nothing else. Its hash is the only
// style the page's CSP allows.
const pageStyle = `:root{--fg:#1d2433;--muted:#4f586b;--bg:#f4f6fa;--card:#fff;--accent:#2454d6;--danger:#b42318;--ok:#067647;--border:#d7dce5}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);overflow-wrap:anywhere}
header{max-width:30rem;margin:1rem auto 0;padding:0 1rem;font-size:.9rem;color:var(--muted)}
header strong{color:var(--fg)}
main{max-width:30rem;margin:2rem auto;padding:0 1rem}
.card{background:var(--card);border:1px solid var(--border);border-radius:12px;padding:1.5rem;box-shadow:0 1px 3px rgba(0,0,0,.05)}
h1{font-size:1.35rem;margin:0 0 .75rem}
h1.ok{color:var(--ok)}
h1.error{color:var(--danger)}
p{margin:.5rem 0}
.muted{color:var(--muted);font-size:.9rem}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--bg);border-radius:4px;padding:.1rem .35rem}
dl{margin:.75rem 0;display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}
dt{color:var(--muted)}
dd{margin:0;min-width:0;font-weight:600}`

var pageCSP = "default-src 'none'; style-src 'sha256-" + styleHash() + "'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func styleHash() string {
	h := sha256.Sum256([]byte(pageStyle))
	return base64.StdEncoding.EncodeToString(h[:])
}

// The page the browser shows after the redirect to the loopback listener.
// html/template escapes the server-supplied error_description. Parsed on
// first use: only a browser login shows it, every command started with it.
var callbackPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("callback").Parse(callbackHTML))
})

const callbackHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>mcpauth: {{.Title}}</title>
<style>{{.Style}}</style></head>
<body><header><strong>mcpauth</strong> command-line login</header>
<main><div class="card">
<h1 id="result" class="{{if .OK}}ok{{else}}error{{end}}">{{.Title}}</h1>
<p id="message">{{.Message}}</p>
{{if .Server}}<dl><dt>Server</dt><dd id="server">{{.Server}}</dd>{{if .Account}}<dt>Account</dt><dd id="account">{{.Account}}</dd>{{end}}</dl>{{end}}
{{if .Code}}<p class="muted">Error: <code id="error-code">{{.Code}}</code></p>{{end}}
{{if .Detail}}<p class="muted" id="detail">{{.Detail}}</p>{{end}}
</div></main></body></html>
`

type page struct {
	Status  int
	OK      bool
	Title   string
	Message string
	Code    string
	Detail  string
	// Server and Account say where the person signed in and as whom.
	Server, Account string
}

// signedInPage ends a login that worked, naming the server and the account
// when known, so a person with several accounts sees which one it was.
func signedInPage(server, account string) page {
	return page{Status: http.StatusOK, OK: true, Title: "Signed in", Server: server, Account: account,
		Message: "mcpauth received the authorization. You can close this tab and return to the terminal."}
}

// explain words the errors a person caused in their own terms: an
// access_denied is them pressing Cancel or Deny (at the server or at its
// identity provider), and the CLI has stopped because of it.
func explain(p page) page {
	if !p.OK && p.Code == "access_denied" {
		p.Title = "Sign-in cancelled"
		p.Message = "You cancelled the sign-in, or access was denied, so mcpauth has stopped. You can close this tab; run the command again to retry."
	}
	return p
}

func writePage(w http.ResponseWriter, p page) {
	p = explain(p)
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", pageCSP)
	w.WriteHeader(p.Status)
	data := struct {
		page
		Style template.CSS
	}{p, template.CSS(pageStyle)}
	_ = callbackPage().Execute(w, data) // the browser went away: nothing to do
}
