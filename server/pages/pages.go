// Package pages renders the reference server's browser pages: consent,
// device verification, settings and errors. Templates and CSS are embedded,
// so the binary is self-contained.
package pages

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Renderer executes the page templates.
type Renderer struct {
	pages map[string]*template.Template
}

// Page names.
const (
	Home          = "home"
	Consent       = "consent"
	DeviceEnter   = "device_enter"
	DeviceConfirm = "device_confirm"
	DeviceDone    = "device_done"
	Settings      = "settings"
	Logout        = "logout"
	Error         = "error"
)

// New parses every page together with the shared layout.
func New() (*Renderer, error) {
	r := &Renderer{pages: map[string]*template.Template{}}
	for _, name := range []string{Home, Consent, DeviceEnter, DeviceConfirm, DeviceDone, Settings, Logout, Error} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("parsing page %s: %w", name, err)
		}
		r.pages[name] = t
	}
	return r, nil
}

// copyScript is the only script on any page: it reveals the Copy button
// beside the API key in Settings and copies the key. Without scripts the
// button stays hidden and the key is selectable as before. The CSP allows
// exactly this text, by its hash.
const copyScript = `(function(){var b=document.getElementById("copy-key"),k=document.getElementById("api-key"),s=document.getElementById("copy-status");` +
	`if(!b||!k||!s||!navigator.clipboard)return;b.hidden=false;b.addEventListener("click",function(){s.textContent="";` +
	`navigator.clipboard.writeText(k.textContent.trim()).then(function(){s.textContent="Copied to the clipboard."},` +
	`function(){s.textContent="Could not copy: select the key and copy it yourself."})})})();`

var funcs = template.FuncMap{"copyScript": func() template.JS { return template.JS(copyScript) }}

var csp = "default-src 'none'; script-src 'sha256-" + sha256Base64(copyScript) + "'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'"

func sha256Base64(s string) string {
	h := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(h[:])
}

// SecurityHeaders are set on every page: no framing (decisions.md), no
// caching of pages that carry CSRF tokens or keys, and a CSP that allows only
// our own stylesheet and the one inline script, by hash. form-action is deliberately absent: browsers apply it
// to the redirect after the consent form, which must reach the client.
func SecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// Render writes page name with data and status. It renders into a buffer
// first so a template error never leaves half a page.
func (r *Renderer) Render(w http.ResponseWriter, status int, name string, data any) error {
	t, ok := r.pages[name]
	if !ok {
		return fmt.Errorf("unknown page %q", name)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return fmt.Errorf("rendering page %s: %w", name, err)
	}
	SecurityHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

// Static serves the embedded stylesheet under /static/.
func (r *Renderer) Static() http.Handler {
	sub, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, req)
	})
}
