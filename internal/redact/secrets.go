package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Secrets is the set of secret values one run obtained (tokens, codes,
// client secrets, verifiers, cookies, API keys), so that what the run
// prints can mask each of them wherever it appears and however it was
// carried: a token a server wrongly granted as text/plain is as secret as
// one it granted as JSON. The zero value is ready to use; it is safe for
// concurrent use.
type Secrets struct {
	mu       sync.Mutex
	values   map[string]int    // a form of a secret as it may be printed -> the secret's length
	replacer *strings.Replacer // nil until Mask needs it after an Add
}

// MinSecretLen is the shortest value masked wherever it appears: a shorter
// one would mask ordinary words. Shorter values are masked where they are
// named (a secret member, parameter or header), as every value is.
const MinSecretLen = 8

// secretMembers are the JSON member names whose values are secrets, at any
// depth. "code" is not one: JSON-RPC and many error bodies use it for an
// error's number or name, and an authorization code travels in a query or
// form, where it is one.
var secretMembers = []string{"access_token", "refresh_token", "id_token", "registration_access_token", "client_secret",
	"device_code", "code_verifier", "api_key", "password", "token", "assertion", "client_assertion", "subject_token", "actor_token"}

// secretParams are the query and form parameter names whose values are
// secrets: the members, and "code". A function, not a variable, so that
// nothing is built at start-up (cmd/mcpauth's start-up test).
func secretParams() []string { return append(slices.Clone(secretMembers), "code") }

// isSecretParam reports whether query or form parameter k is a secret.
func isSecretParam(k string) bool {
	return strings.EqualFold(k, "code") || isSecretName(secretMembers, k)
}

// Redacted is what secret is shown as: how long it was, never what.
func Redacted(secret string) string { return marker(utf8.RuneCountInString(secret)) }

func marker(n int) string { return fmt.Sprintf("[redacted %d chars]", n) }

// Add registers secret values; values shorter than MinSecretLen are not
// masked in free text (see MinSecretLen).
func (s *Secrets) Add(values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range values {
		if len(v) < MinSecretLen {
			continue
		}
		if s.values == nil {
			s.values = map[string]int{}
		}
		n := utf8.RuneCountInString(v)
		quoted, _ := json.Marshal(v)
		// As printed raw, in a query or form, and inside a JSON string.
		for _, form := range []string{v, url.QueryEscape(v), url.PathEscape(v), string(quoted[1 : len(quoted)-1])} {
			if _, ok := s.values[form]; !ok {
				s.values[form] = n
				s.replacer = nil
			}
		}
	}
}

// LearnBody registers the secrets of a request or response body whatever
// its declared type: the values of secret members at any depth of a JSON
// document (and of documents quoted in it), of secret parameters of a
// form, and whatever Mask would mask by name.
func (s *Secrets) LearnBody(b []byte) {
	var doc any
	if json.Unmarshal(b, &doc) == nil {
		s.Add(secretStrings(doc, false)...)
	} else if v, err := url.ParseQuery(strings.TrimSpace(string(b))); err == nil {
		s.learnValues(v)
	}
	s.learnNamed(string(b))
}

// learnNamed registers the values MaskNamed would mask by name, so that
// they are masked wherever else they appear too.
func (s *Secrets) learnNamed(text string) {
	for _, re := range []*regexp.Regexp{jsonMember(), quotedJSONMember(), param()} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			s.Add(m[1])
			if u, err := url.QueryUnescape(m[1]); err == nil {
				s.Add(u)
			}
		}
	}
}

// secretStrings are the strings of doc that sit under a secret member;
// inSecret says doc itself does.
func secretStrings(doc any, inSecret bool) []string {
	var out []string
	switch d := doc.(type) {
	case string:
		var inner any
		switch {
		case inSecret:
			out = append(out, d)
		case strings.HasPrefix(d, "{") && json.Unmarshal([]byte(d), &inner) == nil:
			// A document quoted in another.
			out = append(out, secretStrings(inner, false)...)
		}
	case map[string]any:
		for k, v := range d {
			out = append(out, secretStrings(v, inSecret || isSecretName(secretMembers, k))...)
		}
	case []any:
		for _, v := range d {
			out = append(out, secretStrings(v, inSecret)...)
		}
	}
	return out
}

func isSecretName(names []string, k string) bool {
	return slices.Contains(names, strings.ToLower(k))
}

// LearnURL registers the secret query and fragment parameters of a URL.
func (s *Secrets) LearnURL(raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	s.learnValues(u.Query())
	if f, err := url.ParseQuery(u.Fragment); err == nil {
		s.learnValues(f)
	}
}

func (s *Secrets) learnValues(v url.Values) {
	for k, vs := range v {
		if isSecretParam(k) {
			s.Add(vs...)
		}
	}
}

// LearnHeader registers the credentials of request or response headers:
// Authorization (Basic decoded too), cookies, and secret parameters of a
// Location.
func (s *Secrets) LearnHeader(h http.Header) {
	for _, k := range []string{"Authorization", "Proxy-Authorization"} {
		for _, v := range h.Values(k) {
			scheme, cred, ok := strings.Cut(v, " ")
			if !ok {
				s.Add(v)
				continue
			}
			s.Add(cred)
			if strings.EqualFold(scheme, "Basic") {
				if raw, err := base64.StdEncoding.DecodeString(cred); err == nil {
					// The client id before the colon is not a secret.
					_, secret, _ := strings.Cut(string(raw), ":")
					s.Add(string(raw), secret)
					if u, err := url.QueryUnescape(secret); err == nil {
						s.Add(u)
					}
				}
			}
		}
	}
	cookies := (&http.Request{Header: http.Header{"Cookie": h.Values("Cookie")}}).Cookies()
	cookies = append(cookies, (&http.Response{Header: http.Header{"Set-Cookie": h.Values("Set-Cookie")}}).Cookies()...)
	for _, c := range cookies {
		s.Add(c.Value)
	}
	for _, v := range h.Values("Location") {
		s.LearnURL(v)
	}
}

var (
	// A secret member of a JSON document, at any depth, and the same inside
	// a JSON string (a document quoted in another).
	jsonMember = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)"(?:` + strings.Join(secretMembers, "|") + `)"\s*:\s*"((?:[^"\\]|\\.)*)"`)
	})
	quotedJSONMember = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\\"(?:` + strings.Join(secretMembers, "|") + `)\\"\s*:\s*\\"((?:[^"\\]|\\[^"])*)\\"`)
	})
	// A secret parameter of a query, a form or free text: name=value.
	param = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:^|[?&#\s;,"'(])(?:` + strings.Join(secretParams(), "|") + `)=([^&#\s"';,)<>]*)`)
	})
	// Credentials recognisable by their shape: a JWT, an mcpauth API key.
	shaped = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*|mcpa_[0-9A-Za-z]+`)
	})
)

// Mask returns text with every registered secret masked, and every value
// that is a secret by its name (a JSON member at any depth, a query or form
// parameter) or by its shape (a JWT, an API key), whatever text it is: a
// body of any type, a URL, a header value, a reason. A nil Secrets masks by
// name and shape only.
func (s *Secrets) Mask(text string) string {
	if s == nil {
		return MaskNamed(text)
	}
	if r := s.replacerFor(); r != nil {
		text = r.Replace(text)
	}
	return MaskNamed(text)
}

// MaskNamed masks the values that are secrets by name or shape (see Mask),
// for text quoted before the run's Secrets can see it whole.
func MaskNamed(text string) string {
	for _, re := range []*regexp.Regexp{jsonMember(), quotedJSONMember(), param()} {
		text = maskGroup(re, text)
	}
	return shaped().ReplaceAllStringFunc(text, Redacted)
}

// maskGroup masks the first group of every match of re, unless it is empty
// or already masked.
func maskGroup(re *regexp.Regexp, text string) string {
	matches := re.FindAllStringSubmatchIndex(text, -1)
	if matches == nil {
		return text
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		start, end := m[2], m[3]
		v := text[start:end]
		if v == "" || strings.HasPrefix(v, "[redacted") {
			continue
		}
		b.WriteString(text[last:start])
		b.WriteString(Redacted(v))
		last = end
	}
	b.WriteString(text[last:])
	return b.String()
}

// replacerFor replaces every registered form of a secret, the longest
// first so that a secret containing another is masked whole.
func (s *Secrets) replacerFor() *strings.Replacer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.replacer != nil || len(s.values) == 0 {
		return s.replacer
	}
	forms := make([]string, 0, len(s.values))
	for f := range s.values {
		forms = append(forms, f)
	}
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, marker(s.values[f]))
	}
	s.replacer = strings.NewReplacer(pairs...)
	return s.replacer
}
