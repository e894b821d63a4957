package devidp

import (
	"bytes"
	"html/template"
	"net/http"
	"net/url"
	"sync"
)

// The pages are deliberately plain: one form with method=post, hidden fields,
// an input named username and a submit button, so any HTTP client can fill it.
// They are parsed on first use, not at package initialisation: every
// `mcpauth` command links this package, few serve these pages.
var pages = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("layout").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Development identity provider — not for production</title>
<style>
body{margin:0;font:16px/1.5 system-ui,sans-serif;background:#f4f4f5;color:#18181b}
.warn{background:#b91c1c;color:#fff;padding:.75rem 1rem;font-weight:700;text-align:center}
main{box-sizing:border-box;width:calc(100% - 2rem);max-width:26rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:.5rem;box-shadow:0 1px 3px rgba(0,0,0,.15)}
h1{font-size:1.25rem;margin:0 0 1rem}
label{display:block;font-weight:600;margin-bottom:.25rem}
input[name=username]{box-sizing:border-box;width:100%;padding:.6rem;font-size:1rem;border:1px solid #71717a;border-radius:.375rem}
input[aria-invalid=true]{border:2px solid #b91c1c}
:focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}
.buttons{display:flex;gap:.5rem;margin-top:1rem}
button{flex:1;padding:.6rem;font-size:1rem;border:0;border-radius:.375rem;background:#1d4ed8;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#18181b;border:1px solid #71717a}
.error{background:#fef2f2;border:1px solid #fca5a5;color:#991b1b;padding:.5rem .75rem;border-radius:.375rem;margin-bottom:1rem}
.note{color:#52525b;font-size:.875rem}
</style>
</head>
<body>
<div class="warn" role="alert">Development identity provider — not for production</div>
<main>
{{template "content" .}}
</main>
</body>
</html>
`))
})

var formPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.Must(pages().Clone()).Parse(`{{define "content"}}<h1>Sign in to {{.Client}}</h1>
<form method="post" action="{{.Action}}">
{{range .Hidden}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}<label for="username">User name</label>
{{if .Error}}<p class="error" id="username-error" role="alert">{{.Error}}</p>
{{end}}<input id="username" name="username" value="{{.Username}}" autocomplete="username" autofocus required maxlength="64"{{if .Error}} aria-describedby="username-error" aria-invalid="true"{{end}}>
<div class="buttons">
<button type="submit" name="action" value="signin">Sign in</button>
<button type="submit" name="action" value="cancel" class="secondary" formnovalidate>Cancel</button>
</div>
</form>
<p class="note">Any name works; the same name is the same user. There is no password: this provider exists for local development only.</p>
{{end}}`))
})

var errorPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.Must(pages().Clone()).Parse(`{{define "content"}}<h1>Sign-in request rejected</h1>
<p class="error" role="alert">{{.}}</p>
{{end}}`))
})

type hiddenField struct{ Name, Value string }

// renderForm shows the sign-in form carrying hidden and its MAC, with problem
// (if any) above the user name field.
func (p *Provider) renderForm(w http.ResponseWriter, status int, hidden url.Values, username, problem string) {
	var fields []hiddenField
	for _, k := range formFields {
		fields = append(fields, hiddenField{k, hidden.Get(k)})
	}
	fields = append(fields, hiddenField{"mac", p.formMAC(hidden)})
	client := hidden.Get("redirect_uri")
	if u, err := url.Parse(client); err == nil && u.Host != "" {
		client = u.Host
	}
	p.renderHTML(w, status, formPage(), map[string]any{
		"Client": client, "Action": p.endpoint("/authorize"), "Hidden": fields,
		"Username": username, "Error": problem,
	})
}

// renderError shows msg on a page; used when there is no trusted redirect URI.
func (p *Provider) renderError(w http.ResponseWriter, status int, msg string) {
	p.renderHTML(w, status, errorPage(), msg)
}

func (p *Provider) renderHTML(w http.ResponseWriter, status int, t *template.Template, data any) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		p.log.Error("devidp: rendering page", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	// No framing (clickjacking), no scripts, and no Referer leaking the
	// request's state to wherever the user goes next.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
