package devidp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpauth/mcpauth/pkce"
)

// formFields are the authorization request parameters the sign-in form
// carries in hidden fields; "issued" dates the form. All are covered by "mac".
var formFields = []string{"client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "code_challenge", "code_challenge_method", "issued"}

// authRequest is a validated authorization request.
type authRequest struct {
	clientID, redirectURI, state, nonce, challenge string
}

// authError is a rejected authorization request. When redirect is false the
// redirect URI is not trusted and the user sees a page instead (RFC 6749
// §4.1.2.1).
type authError struct {
	redirect    bool
	code, desc  string
	redirectURI string
	state       string
}

// parseAuthRequest checks an authorization request (RFC 6749 §4.1.1, RFC 7636
// §4.3, OIDC Core §3.1.2.1). The client and redirect URI come first: until
// both are known good, no error may be sent to the redirect URI.
func (p *Provider) parseAuthRequest(v url.Values) (authRequest, *authError) {
	page := func(desc string) (authRequest, *authError) {
		return authRequest{}, &authError{desc: desc}
	}
	clientID, ok := single(v, "client_id")
	if !ok || clientID != p.clientID {
		return page("The client_id is missing or unknown.")
	}
	redirectURI, ok := single(v, "redirect_uri")
	if !ok || !p.redirectURIs[redirectURI] {
		return page("The redirect_uri is missing or not registered for this client.")
	}
	state, _ := single(v, "state")
	if len(state) > maxParamLen {
		state = "" // not echoed: a client sending this much is not to be trusted with it
	}
	fail := func(code, desc string) (authRequest, *authError) {
		return authRequest{}, &authError{redirect: true, code: code, desc: desc, redirectURI: redirectURI, state: state}
	}
	for _, k := range formFields {
		if len(v[k]) > 1 {
			return fail("invalid_request", k+" is repeated")
		}
	}
	switch {
	case v.Get("response_type") != "code":
		return fail("unsupported_response_type", "response_type must be code")
	case !slices.Contains(strings.Fields(v.Get("scope")), "openid"):
		return fail("invalid_scope", "scope must include openid")
	case state == "":
		return fail("invalid_request", "state is required (at most 1024 characters)")
	case len(v.Get("nonce")) > maxParamLen:
		return fail("invalid_request", "nonce is too long")
	case v.Get("code_challenge_method") != pkce.MethodS256:
		return fail("invalid_request", "code_challenge_method must be S256")
	case !pkce.ValidChallenge(v.Get("code_challenge")):
		return fail("invalid_request", "code_challenge is missing or malformed")
	case v.Get("prompt") == "none":
		// There are no sessions here, so a silent login can never succeed.
		return fail("login_required", "this provider always asks for a user name")
	}
	return authRequest{clientID: clientID, redirectURI: redirectURI, state: state, nonce: v.Get("nonce"), challenge: v.Get("code_challenge")}, nil
}

// single returns the only value of v[key]; ok is false when the parameter is
// absent, empty or repeated (RFC 6749 §3.1).
func single(v url.Values, key string) (string, bool) {
	if len(v[key]) != 1 || v[key][0] == "" {
		return "", false
	}
	return v[key][0], true
}

// authorizeGet validates the request and shows the sign-in form.
func (p *Provider) authorizeGet(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if _, aerr := p.parseAuthRequest(q); aerr != nil {
		p.rejectAuth(w, r, aerr)
		return
	}
	hidden := url.Values{}
	for _, k := range formFields {
		hidden.Set(k, q.Get(k))
	}
	hidden.Set("issued", strconv.FormatInt(p.clock.Now().Unix(), 10))
	p.renderForm(w, http.StatusOK, hidden, "", "")
}

// authorizePost handles the submitted form: check the hidden fields are the
// ones we issued, check the name, then redirect with a fresh code.
func (p *Provider) authorizePost(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := r.ParseForm(); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			p.renderError(w, http.StatusRequestEntityTooLarge, "The form was too large.")
			return
		}
		p.renderError(w, http.StatusBadRequest, "The form could not be read.")
		return
	}
	hidden := url.Values{}
	for _, k := range formFields {
		if len(r.PostForm[k]) > 1 {
			p.renderError(w, http.StatusBadRequest, "The sign-in form was altered. Start again from the application.")
			return
		}
		hidden.Set(k, r.PostForm.Get(k))
	}
	if !hmac.Equal([]byte(r.PostForm.Get("mac")), []byte(p.formMAC(hidden))) {
		p.renderError(w, http.StatusBadRequest, "The sign-in form was altered. Start again from the application.")
		return
	}
	issued, _ := strconv.ParseInt(hidden.Get("issued"), 10, 64)
	if age := p.clock.Now().Sub(time.Unix(issued, 0)); age > formTTL || age < -time.Minute {
		p.renderError(w, http.StatusBadRequest, "The sign-in form has expired. Start again from the application.")
		return
	}
	req, aerr := p.parseAuthRequest(hidden)
	if aerr != nil { // cannot happen for a form we signed, unless the config changed
		p.renderError(w, http.StatusBadRequest, aerr.desc)
		return
	}
	if r.PostForm.Get("action") == "cancel" {
		p.rejectAuth(w, r, &authError{redirect: true, code: "access_denied", desc: "the user cancelled", redirectURI: req.redirectURI, state: req.state})
		return
	}
	name, problem := checkName(r.PostForm.Get("username"))
	if problem != "" {
		p.renderForm(w, http.StatusBadRequest, hidden, r.PostForm.Get("username"), problem)
		return
	}
	code, err := randomToken()
	if err == nil {
		err = p.codes.put(code, grant{
			clientID:    req.clientID,
			redirectURI: req.redirectURI,
			challenge:   req.challenge,
			nonce:       req.nonce,
			sub:         subject(name),
			name:        name,
			expires:     p.clock.Now().Add(codeTTL),
		}, p.clock.Now())
	}
	if err != nil {
		p.log.Error("devidp: issuing code", "err", err)
		p.renderError(w, http.StatusServiceUnavailable, "Could not sign in right now. Try again shortly.")
		return
	}
	p.log.Info("devidp: signed in", "sub", subject(name))
	http.Redirect(w, r, p.callbackURL(req.redirectURI, url.Values{"code": {code}, "state": {req.state}}), http.StatusSeeOther)
}

// rejectAuth reports aerr: on a page when the redirect URI is untrusted,
// otherwise by redirecting with error, error_description and state.
func (p *Provider) rejectAuth(w http.ResponseWriter, r *http.Request, aerr *authError) {
	if !aerr.redirect {
		p.renderError(w, http.StatusBadRequest, aerr.desc)
		return
	}
	v := url.Values{"error": {aerr.code}, "error_description": {aerr.desc}}
	if aerr.state != "" {
		v.Set("state", aerr.state)
	}
	http.Redirect(w, r, p.callbackURL(aerr.redirectURI, v), http.StatusSeeOther)
}

// callbackURL adds v and iss (RFC 9207) to the registered redirect URI,
// keeping any query it already has.
func (p *Provider) callbackURL(redirectURI string, v url.Values) string {
	u, _ := url.Parse(redirectURI) // parsed successfully in New
	q := u.Query()
	for k, vs := range v {
		q[k] = vs
	}
	q.Set("iss", p.issuer)
	u.RawQuery = q.Encode()
	return u.String()
}

// formMAC authenticates the hidden fields, so the POST carries exactly the
// request that GET validated. Encode sorts keys, which makes it canonical.
func (p *Provider) formMAC(hidden url.Values) string {
	m := hmac.New(sha256.New, p.macKey)
	m.Write([]byte(hidden.Encode()))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkName trims raw and returns it, or a message for the user explaining
// why it cannot be a user name.
func checkName(raw string) (name, problem string) {
	name = strings.TrimSpace(raw)
	switch {
	case !utf8.ValidString(name):
		return "", "The user name is not valid text."
	case name == "":
		return "", "Enter a user name."
	case utf8.RuneCountInString(name) > maxNameLen:
		return "", fmt.Sprintf("The user name may be at most %d characters.", maxNameLen)
	case strings.ContainsFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }):
		// Cf covers invisible format characters such as bidi overrides,
		// which would let two different subjects look the same.
		return "", "The user name may not contain control or invisible characters."
	}
	return name, ""
}

// subject derives the stable subject for a user name: "dev-" and the
// lowercased name, with anything but [a-z0-9._-] percent-encoded so the
// result is ASCII and distinct names stay distinct. The same name is the
// same user across restarts.
func subject(name string) string {
	var b strings.Builder
	b.WriteString("dev-")
	for _, c := range []byte(strings.ToLower(name)) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
