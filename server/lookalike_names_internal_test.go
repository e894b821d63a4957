package server

import "testing"

// Names that imitate a brand with characters Unicode lists as confusable
// (UTS #39) or as compatibility forms (NFKC) must all get the warning.
func TestClaimedIdentityImitations(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"Ｇｏｏｇｌｅ", "Google"},         // fullwidth
		{"𝐆𝐨𝐨𝐠𝐥𝐞", "Google"},         // mathematical bold
		{"Ꮐoogle", "Google"},         // Cherokee Ꮐ
		{"GitҺub", "GitHub"},         // Cyrillic Һ
		{"ⅽlaude", "Claude"},         // small roman numeral one hundred
		{"Anthropⅰc", "Anthropic"},   // small roman numeral one
		{"G00gle", "Google"},         // digit zero
		{"Gооgle", "Google"},         // Cyrillic о
		{"Аnthropic", "Anthropic"},   // Cyrillic А
		{"Micrоsoft", "Microsoft"},   // Cyrillic о
		{"CIaude", "Claude"},         // capital I for l
		{"GitHuЬ", "GitHub"},         // Cyrillic Ь
		{"Gіthub Login", "GitHub"},   // Cyrillic і
		{"C|aude Desktop", "Claude"}, // vertical line for l
		{"ANTHROPIC", "Anthropic"},
		{"0penAI", "OpenAI"},
	} {
		if got := claimedIdentity(tc.name, "127.0.0.1:8080"); got != tc.want {
			t.Errorf("claimedIdentity(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Ordinary names, in Latin and other scripts, claim nobody.
func TestClaimedIdentityOrdinaryNames(t *testing.T) {
	for _, name := range []string{
		"Weather tool", "Pineapple notes", "Cursory reader", "Goggle viewer", "Clause checker",
		"Notion sync", "Linear issues", "Zed editor", "Obsidian vault", "Home Assistant",
		"Grafana dashboards", "Dropbox backup", "Jira helper", "Postgres explorer", "Calendar bot",
		"Погода", "天気アプリ", "Müller Buchhaltung", "Café menu", "Ελληνικά εργαλεία",
		"Metallica fan club", "Lawsuit tracker", "Applesauce recipes", "Gogole translator",
		"My MCP client", "mcp-remote", "Claudia's notes", "Githubber",
	} {
		if got := claimedIdentity(name, "127.0.0.1:8080"); got != "" {
			t.Errorf("claimedIdentity(%q) = %q, want none", name, got)
		}
	}
}
