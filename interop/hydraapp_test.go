package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/internal/syncbuf"
)

// hydraApp is the login and consent app Ory Hydra delegates to (Hydra has
// no user store or pages of its own): plain HTML forms that sign in any
// user name with the lab's password and approve or deny, answering each
// challenge through Hydra's admin API. It is also Hydra's token hook, which
// logs each refresh grant for the lab's refresh cell.
type hydraApp struct {
	admin  string // Hydra's admin URL
	grants *syncbuf.Buffer
	hc     *http.Client
}

// labPassword is the password the lab's browser and driver type for alice.
const labPassword = "alice-password"

var hydraPage = template.Must(template.New("page").Parse(`<!doctype html><html><head><title>{{.Title}}</title></head><body><h1>{{.Title}}</h1>
{{if .Scopes}}<p>{{.Client}} asks for: {{range .Scopes}}{{.}} {{end}}</p>{{end}}
<form method="post" action="{{.Action}}"><input type="hidden" name="challenge" value="{{.Challenge}}">
{{if .SignIn}}<label>User <input type="text" name="username"></label> <label>Password <input type="password" name="password"></label> <button type="submit">Sign in</button>
{{else}}<button type="submit" name="decision" value="allow">Allow</button>{{end}}</form>
{{if not .SignIn}}<form method="post" action="{{.Action}}"><input type="hidden" name="challenge" value="{{.Challenge}}"><button type="submit" name="decision" value="deny">Deny</button></form>{{end}}
</body></html>`))

type hydraPageData struct {
	Title, Action, Challenge, Client string
	Scopes                           []string
	SignIn                           bool
}

// startHydraApp serves the app on loopback until the test ends.
func startHydraApp(t *testing.T, admin string, grants *syncbuf.Buffer) string {
	t.Helper()
	a := &hydraApp{admin: admin, grants: grants, hc: &http.Client{Timeout: 10 * time.Second}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", a.loginPage)
	mux.HandleFunc("POST /login", a.login)
	mux.HandleFunc("GET /consent", a.consentPage)
	mux.HandleFunc("POST /consent", a.consent)
	mux.HandleFunc("POST /token-hook", a.tokenHook)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs.URL
}

// loginRequest is the part of Hydra's login and consent requests the app
// reads.
type loginRequest struct {
	Skip                         bool     `json:"skip"`
	Subject                      string   `json:"subject"`
	RequestURL                   string   `json:"request_url"`
	RequestedScope               []string `json:"requested_scope"`
	RequestedAccessTokenAudience []string `json:"requested_access_token_audience"`
	Client                       struct {
		ID       string   `json:"client_id"`
		Audience []string `json:"audience"`
	} `json:"client"`
}

func (a *hydraApp) loginPage(w http.ResponseWriter, r *http.Request) {
	challenge := r.URL.Query().Get("login_challenge")
	var req loginRequest
	if err := a.call(http.MethodGet, "login", "", challenge, nil, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if req.Skip { // Hydra already knows the user: it must be accepted as is
		a.redirect(w, "login", "accept", challenge, map[string]any{"subject": req.Subject})
		return
	}
	a.page(w, hydraPageData{Title: "Sign in", Action: "/login", Challenge: challenge, SignIn: true}, http.StatusOK)
}

func (a *hydraApp) login(w http.ResponseWriter, r *http.Request) {
	challenge, user := r.PostFormValue("challenge"), r.PostFormValue("username")
	if user == "" || r.PostFormValue("password") != labPassword {
		a.page(w, hydraPageData{Title: "Wrong user name or password", Action: "/login", Challenge: challenge, SignIn: true}, http.StatusUnauthorized)
		return
	}
	a.redirect(w, "login", "accept", challenge, map[string]any{"subject": user})
}

func (a *hydraApp) consentPage(w http.ResponseWriter, r *http.Request) {
	challenge := r.URL.Query().Get("consent_challenge")
	var req loginRequest
	if err := a.call(http.MethodGet, "consent", "", challenge, nil, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	a.page(w, hydraPageData{Title: "Authorize", Action: "/consent", Challenge: challenge, Client: req.Client.ID, Scopes: req.RequestedScope}, http.StatusOK)
}

// consent grants what was asked, and the request's RFC 8707 resources as
// the access token's audience: Hydra reads only its own audience
// parameter, and the lab's MCP server wants its URL in aud. On refresh
// Hydra checks the granted audience against the client's registered ones,
// so they are added to the client too (the admin API).
func (a *hydraApp) consent(w http.ResponseWriter, r *http.Request) {
	challenge := r.PostFormValue("challenge")
	if r.PostFormValue("decision") != "allow" {
		a.redirect(w, "consent", "reject", challenge, map[string]any{"error": "access_denied", "error_description": "The user denied the request."})
		return
	}
	var req loginRequest
	if err := a.call(http.MethodGet, "consent", "", challenge, nil, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	audience := slices.Clone(req.RequestedAccessTokenAudience)
	if u, err := url.Parse(req.RequestURL); err == nil {
		audience = append(audience, u.Query()["resource"]...)
	}
	if err := a.allowAudience(req.Client.ID, req.Client.Audience, audience); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	a.redirect(w, "consent", "accept", challenge, map[string]any{
		"grant_scope": req.RequestedScope, "grant_access_token_audience": audience,
	})
}

// allowAudience adds what the client's registered audiences lack of
// audience to them.
func (a *hydraApp) allowAudience(clientID string, has, audience []string) error {
	all := slices.Clone(has)
	for _, aud := range audience {
		if !slices.Contains(all, aud) {
			all = append(all, aud)
		}
	}
	if len(all) == len(has) {
		return nil
	}
	patch := []map[string]any{{"op": "add", "path": "/audience", "value": all}}
	return a.do(http.MethodPatch, a.admin+"/admin/clients/"+url.PathEscape(clientID), patch, nil)
}

// tokenHook logs the refresh grants Hydra is about to answer and leaves
// every token as it is (204).
func (a *hydraApp) tokenHook(w http.ResponseWriter, r *http.Request) {
	var hook struct {
		Request struct {
			GrantTypes []string `json:"grant_types"`
		} `json:"request"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&hook); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if slices.Contains(hook.Request.GrantTypes, "refresh_token") {
		fmt.Fprintln(a.grants, refreshLine)
	}
	w.WriteHeader(http.StatusNoContent)
}

// redirect answers a challenge (kind login or consent, verb accept or
// reject) and sends the browser where Hydra says.
func (a *hydraApp) redirect(w http.ResponseWriter, kind, verb, challenge string, body any) {
	var out struct {
		RedirectTo string `json:"redirect_to"`
	}
	if err := a.call(http.MethodPut, kind, "/"+verb, challenge, body, &out); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Location", out.RedirectTo)
	w.WriteHeader(http.StatusFound)
}

// call is one request to Hydra's admin API for a login or consent
// challenge.
func (a *hydraApp) call(method, kind, suffix, challenge string, body, out any) error {
	return a.do(method, a.admin+"/admin/oauth2/auth/requests/"+kind+suffix+"?"+url.Values{kind + "_challenge": {challenge}}.Encode(), body, out)
}

// do sends body (if any) as JSON and decodes a 200's JSON into out (if
// any).
func (a *hydraApp) do(method, u string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		return fmt.Errorf("hydra admin: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("hydra admin %s %s: %s: %s", method, req.URL.Path, resp.Status, snippet(b))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("hydra admin %s %s: %w", method, req.URL.Path, err)
	}
	return nil
}

func (a *hydraApp) page(w http.ResponseWriter, d hydraPageData, status int) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = hydraPage.Execute(w, d)
}
