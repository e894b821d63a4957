package server

import (
	"net"
	"net/url"
	"strings"
	"unicode"

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
// "Pineapple notes" does not claim Apple, while "G00gle Login", "GitHubApp"
// and "Gооgle" (Cyrillic o) claim Google and GitHub.
func claimedIdentity(name, serverHost string) string {
	words := nameWords(name)
	host := strings.ToLower(hostOnly(serverHost))
	if host != "" && strings.Contains(strings.ToLower(name), host) {
		return serverHost
	}
	if label := hostLabel(host); label != "" && wordsSpell(words, label) {
		return serverHost
	}
	for _, b := range knownBrands {
		if wordsSpell(words, strings.Join(nameWords(b), "")) {
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

// nameWords splits a name into lower-case words at spaces, punctuation and
// camel-case humps ("VSCode" → vs, code), after folding lookalike
// characters to the Latin letters they imitate.
func nameWords(name string) []string {
	rs := []rune(name)
	for i, r := range rs {
		rs[i] = fold(r)
	}
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
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

// lookalikes maps characters used to imitate Latin letters: digits, and the
// Cyrillic and Greek letters that look the same.
var lookalikes = map[rune]rune{
	'0': 'o', '1': 'l', '3': 'e', '5': 's', '@': 'a', '$': 's',
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'х': 'x', 'у': 'y', 'і': 'i', 'ј': 'j', 'ѕ': 's', 'һ': 'h', 'ԁ': 'd', 'ɡ': 'g',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T', 'Х': 'X', 'І': 'I',
	'α': 'a', 'ο': 'o', 'ρ': 'p', 'ν': 'v', 'ι': 'i', 'Ο': 'O', 'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ρ': 'P', 'Τ': 'T', 'Χ': 'X',
}

func fold(r rune) rune {
	if l, ok := lookalikes[r]; ok {
		return l
	}
	return r
}
