package oauthwire

import (
	"net/http"
	"strings"
)

// Challenge is one challenge of a WWW-Authenticate header (RFC 7235 §2.1).
// Scheme keeps the server's spelling; parameter names are lower-cased (they
// are case-insensitive) and quoted values are unescaped.
type Challenge struct {
	Scheme  string
	Token68 string
	Params  map[string]string
}

// ParseChallenges parses every WWW-Authenticate value in h. A header can hold
// several challenges and a response several headers; unparseable tails are
// dropped rather than failing the whole header.
func ParseChallenges(h http.Header) []Challenge {
	var out []Challenge
	for _, v := range h.Values("WWW-Authenticate") {
		out = append(out, ParseWWWAuthenticate(v)...)
	}
	return out
}

// BearerChallenge returns the first Bearer challenge in h (RFC 6750 §3).
func BearerChallenge(h http.Header) (Challenge, bool) {
	for _, c := range ParseChallenges(h) {
		if strings.EqualFold(c.Scheme, "Bearer") {
			return c, true
		}
	}
	return Challenge{}, false
}

// ResourceChallenge returns the challenge a protected resource's 401 or 403
// names its terms in: the first Bearer challenge (RFC 6750 §3), else the
// first DPoP one (RFC 9449 §7.1: a resource that takes only DPoP-bound
// tokens may offer no Bearer challenge at all).
func ResourceChallenge(h http.Header) (Challenge, bool) {
	if c, ok := BearerChallenge(h); ok {
		return c, true
	}
	for _, c := range ParseChallenges(h) {
		if strings.EqualFold(c.Scheme, "DPoP") {
			return c, true
		}
	}
	return Challenge{}, false
}

// ChallengeSchemes lists the schemes of h's challenges, as sent.
func ChallengeSchemes(h http.Header) []string {
	var out []string
	for _, c := range ParseChallenges(h) {
		out = append(out, c.Scheme)
	}
	return out
}

// ParseWWWAuthenticate parses one header value:
//
//	challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
//	auth-param = token BWS "=" BWS ( token / quoted-string )
//
// Challenges and parameters are both comma-separated; a token not followed by
// "=" starts the next challenge.
func ParseWWWAuthenticate(v string) []Challenge {
	p := &authParser{s: v}
	var out []Challenge
	for {
		p.skipListSeparators()
		if p.eof() {
			return out
		}
		scheme := p.token()
		if scheme == "" {
			return out // garbage: keep what we have
		}
		c := Challenge{Scheme: scheme, Params: map[string]string{}}
		if p.eof() || p.peek() == ',' || p.skipSpace() {
			if t, ok := p.token68(); ok {
				c.Token68 = t
			} else {
				p.params(c.Params)
			}
		}
		out = append(out, c)
	}
}

type authParser struct {
	s   string
	pos int
}

func (p *authParser) eof() bool  { return p.pos >= len(p.s) }
func (p *authParser) peek() byte { return p.s[p.pos] }

// skipSpace skips OWS and reports whether it skipped any.
func (p *authParser) skipSpace() bool {
	start := p.pos
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t') {
		p.pos++
	}
	return p.pos > start
}

func (p *authParser) skipListSeparators() {
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t' || p.peek() == ',') {
		p.pos++
	}
}

func (p *authParser) token() string {
	start := p.pos
	for !p.eof() && isTchar(p.peek()) {
		p.pos++
	}
	return p.s[start:p.pos]
}

// token68 consumes a token68 credential when the rest of the list element is
// exactly one (so "abc==" is a token68 but `realm="x"` is a parameter).
func (p *authParser) token68() (string, bool) {
	start := p.pos
	for !p.eof() && isToken68Char(p.peek()) {
		p.pos++
	}
	if p.pos == start {
		return "", false
	}
	for !p.eof() && p.peek() == '=' {
		p.pos++
	}
	end := p.pos
	p.skipSpace()
	if p.eof() || p.peek() == ',' {
		return p.s[start:end], true
	}
	p.pos = start
	return "", false
}

// params reads auth-params into m until the next challenge starts.
func (p *authParser) params(m map[string]string) {
	for {
		p.skipListSeparators()
		if p.eof() {
			return
		}
		start := p.pos
		name := p.token()
		p.skipSpace()
		if name == "" || p.eof() || p.peek() != '=' {
			p.pos = start // a new challenge (or garbage the caller stops at)
			if name == "" {
				p.pos = len(p.s)
			}
			return
		}
		p.pos++ // '='
		p.skipSpace()
		var val string
		if !p.eof() && p.peek() == '"' {
			val = p.quoted()
		} else {
			val = p.token()
		}
		key := strings.ToLower(name)
		if _, dup := m[key]; !dup { // RFC 7235: each name only once; keep the first
			m[key] = val
		}
		p.skipSpace()
		if !p.eof() && p.peek() != ',' {
			// junk after a value: skip to the next separator
			for !p.eof() && p.peek() != ',' {
				p.pos++
			}
		}
	}
}

// quoted reads a quoted-string (RFC 7230 §3.2.6) starting at '"'.
func (p *authParser) quoted() string {
	p.pos++ // opening quote
	var b strings.Builder
	for !p.eof() {
		c := p.peek()
		p.pos++
		switch {
		case c == '\\' && !p.eof():
			b.WriteByte(p.peek())
			p.pos++
		case c == '"':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String() // unterminated: take the rest
}

func isTchar(c byte) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken68Char(c byte) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}
