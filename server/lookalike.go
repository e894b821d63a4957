package server

import (
	"net"
	"net/url"
	"strings"
	"unicode"

	"go.mau.fi/util/confusable"
	"golang.org/x/text/unicode/norm"

	"github.com/mcpauth/mcpauth/server/store"
)

// firstPartyName is the name our own CLI registers with (flows.ClientConfig).
const firstPartyName = "mcpauth CLI"

// knownBrands are names people trust on sight. A client claiming one of them
// (or this server's) is pointed out on consent; any other name is shown as
// plain fact. Written as words: "VS Code" also matches "VSCode" and
// "vs-code".
var knownBrands = []string{
	serverBrand, "Google", "GitHub", "Microsoft", "Apple", "Anthropic", "OpenAI",
	"Claude", "ChatGPT", "Cursor", "VS Code", "Visual Studio", "Copilot",
	"Amazon", "AWS", "Slack", "Okta", "Auth0", "Meta", "Facebook",
}

// firstParty: the client is our own CLI as it registers itself: exactly its
// name, and every redirect URI on this computer. Anyone could register the
// same, but a code for loopback redirect URIs only reaches this computer,
// so such an impostor would already be running here. A metadata document
// client is never first party: its host is its identity.
func firstParty(c store.Client) bool {
	if c.Name != firstPartyName || isMetadataDocumentID(c.ID) || len(c.RedirectURIs) == 0 {
		return false
	}
	for _, raw := range c.RedirectURIs {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "http" || !isLoopbackHost(u.Hostname()) {
			return false
		}
	}
	return true
}

// claimedIdentity returns whose identity a self-chosen name claims: this
// server's host, a label of it, or a known brand (the brand as written in
// knownBrands); "" when it claims none. Matching works on words, so
// "Pineapple notes" does not claim Apple, while "G00gle Login", "GitHubApp",
// "Ｇｏｏｇｌｅ" (fullwidth) and "Gооgle" (Cyrillic o) claim Google and GitHub.
func claimedIdentity(name, serverHost string) string {
	words := nameWords(name)
	host := strings.ToLower(hostOnly(serverHost))
	if host != "" && strings.Contains(strings.ToLower(name), host) {
		return serverHost
	}
	if label := hostLabel(host); label != "" && spells(words, nameWords(label)) {
		return serverHost
	}
	for _, b := range knownBrands {
		if spells(words, nameWords(b)) {
			return b
		}
	}
	return ""
}

// hostLabel is the distinctive label of a DNS host name ("example" in
// mcp.example.com), or "" for IP addresses, localhost and short labels.
func hostLabel(host string) string {
	if host == "" || net.ParseIP(host) != nil || host == "localhost" {
		return ""
	}
	labels := strings.Split(host, ".")
	if len(labels) < 2 {
		return ""
	}
	l := labels[len(labels)-2]
	if len(l) < 4 {
		return ""
	}
	return l
}

// spells reports whether consecutive words of a name spell target's words
// joined, in either of the two folded forms (foldWord).
func spells(words, target [2][]string) bool {
	return wordsSpell(words[0], strings.Join(target[0], "")) || wordsSpell(words[1], strings.Join(target[1], ""))
}

// wordsSpell reports whether consecutive words, joined, spell target.
func wordsSpell(words []string, target string) bool {
	for i := range words {
		joined := ""
		for _, w := range words[i:] {
			joined += w
			if joined == target {
				return true
			}
			if !strings.HasPrefix(target, joined) {
				break
			}
		}
	}
	return false
}

// nameWords splits a name into words at spaces, punctuation and camel-case
// humps ("VSCode" → vs, code), then folds each word (foldWord), so names
// that only look alike give the same words. Compatibility forms (fullwidth,
// mathematical letters, roman numerals) are folded first by NFKC; a
// character that is no letter but imitates one ("|" for l) stays in its word.
func nameWords(name string) [2][]string {
	rs := []rune(norm.NFKC.String(name))
	var words [2][]string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			w := foldWord(string(cur))
			words[0], words[1] = append(words[0], w[0]), append(words[1], w[1])
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		if !inWord(r) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && i > 0 && len(cur) > 0 {
			prevLower := unicode.IsLower(rs[i-1])
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || (unicode.IsUpper(rs[i-1]) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// inWord: letters, digits and marks, and anything whose confusables
// skeleton is made of them.
func inWord(r rune) bool {
	isWordRune := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }
	if isWordRune(r) {
		return true
	}
	sk := confusable.Skeleton(string(r))
	return sk != "" && strings.IndexFunc(sk, func(r rune) bool { return !isWordRune(r) }) < 0
}

// foldWord gives the two forms of w under which lookalikes compare equal:
// the Unicode confusables skeleton (UTS #39), which is case-sensitive, taken
// before and after lower-casing, so "CIaude" (capital I) folds like
// "Claude"; and lower-cased first, so "ANTHROPIC" folds like "Anthropic"
// (the first form would read its I as an l).
func foldWord(w string) [2]string {
	return [2]string{
		confusable.Skeleton(strings.ToLower(confusable.Skeleton(w))),
		confusable.Skeleton(strings.ToLower(w)),
	}
}
