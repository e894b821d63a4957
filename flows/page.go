package flows

import (
	"html/template"
	"net/http"
)

// The page the browser shows after the redirect to the loopback listener.
// html/template escapes the server-supplied error_description.
var callbackPage = template.Must(template.New("callback").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>mcpauth: {{.Title}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;background:#f5f5f7;color:#1d1d1f;display:flex;min-height:100vh;margin:0;align-items:center;justify-content:center}
main{background:#fff;border-radius:12px;box-shadow:0 2px 12px rgba(0,0,0,.08);padding:2rem 2.5rem;max-width:32rem}
h1{font-size:1.3rem;margin:0 0 .75rem;color:{{if .OK}}#1a7f37{{else}}#cf222e{{end}}}
p{line-height:1.5;margin:.5rem 0}
code{background:#f0f0f3;border-radius:4px;padding:.1rem .35rem}
</style></head>
<body><main>
<h1>{{.Title}}</h1>
<p>{{.Message}}</p>
{{if .Code}}<p>Error: <code>{{.Code}}</code></p>{{end}}
{{if .Detail}}<p>{{.Detail}}</p>{{end}}
</main></body></html>
`))

type page struct {
	Status  int
	OK      bool
	Title   string
	Message string
	Code    string
	Detail  string
}

func writePage(w http.ResponseWriter, p page) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.WriteHeader(p.Status)
	_ = callbackPage.Execute(w, p) // the browser went away: nothing to do
}
