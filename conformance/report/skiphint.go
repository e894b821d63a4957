package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpauth/mcpauth/conformance"
)

// SkipHint is one way to run checks a report skipped: the options of
// `mcpauth conformance` that meet a need, and how many skipped checks
// lacked exactly that.
type SkipHint struct {
	Need    conformance.Need
	Checks  int
	Options string
}

// needOptions names, in the CLI's flags, what meets n.
func needOptions(n conformance.Need) string {
	switch n {
	case conformance.NeedApproval:
		return "--approve=browser (Chromium signs in once as --username with --password, or you with --headed), " +
			"--approve=form (signs in as --username at a development identity provider), --approve=manual to approve yourself, " +
			"or --browser-command CMD (your program drives a browser through any sign-in page)"
	case conformance.NeedTimeTravel:
		return "--clock-url <base_url>/api/test/clock (mcpauth serve --test-clock), or --real-time for waits of up to a minute"
	case conformance.NeedAPIKey:
		return "--api-key-file FILE, or --approve=form to read the key from Settings"
	case conformance.NeedDestructive:
		return "--destructive (the test user's API key is regenerated)"
	case conformance.NeedSession:
		return "--session-cookie-file FILE, or --approve=form to sign in"
	case conformance.NeedClockURL:
		return "--clock-url <base_url>/api/test/clock (mcpauth serve --test-clock)"
	case conformance.NeedCIMDPrivate:
		return "--cimd-private (mcpauth serve --cimd-allow-private, trusting --cimd-cert)"
	}
	return n.String()
}

// SkipHints groups the checks skipped for an unmet need, largest group
// first. Checks that skipped themselves (the target lacks what they test)
// are not in it: no option runs them.
func SkipHints(r *conformance.Report) []SkipHint {
	count := map[conformance.Need]int{}
	for _, res := range r.Results {
		if res.Verdict == conformance.VerdictSkip && res.Unmet != 0 {
			count[res.Unmet]++
		}
	}
	var hints []SkipHint
	for n, c := range count {
		hints = append(hints, SkipHint{Need: n, Checks: c, Options: needOptions(n)})
	}
	slices.SortFunc(hints, func(a, b SkipHint) int {
		if a.Checks != b.Checks {
			return b.Checks - a.Checks
		}
		return int(a.Need) - int(b.Need)
	})
	return hints
}

// unsignedNote says plainly, under the verdict line, how many checks did
// not run for want of a sign-in: a PASS without them says little about the
// authorization flow. "" when none.
func unsignedNote(results []conformance.Result) string {
	n := 0
	for _, res := range results {
		if res.Verdict == conformance.VerdictSkip && res.Unmet == conformance.NeedApproval {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d %s that need a sign-in did not run: no approver (--approve=browser, --approve=form, --approve=manual or --browser-command); the verdict above is without them",
		n, plural(n, "check"))
}

// writeSkipHints closes the text report: which options would run the
// skipped checks, so that a pass with many skips says how to check more.
func (l layout) writeSkipHints(b *strings.Builder, hints []SkipHint) {
	if len(hints) == 0 {
		return
	}
	total := 0
	for _, h := range hints {
		total += h.Checks
	}
	b.WriteString(fmt.Sprintf("\n%d skipped %s would run with:\n", total, plural(total, "check")))
	for _, h := range hints {
		prefix := fmt.Sprintf("  %3d %-6s  ", h.Checks, plural(h.Checks, "check"))
		for i, line := range l.wrap(h.Options, l.width-len(prefix)) {
			if i > 0 {
				prefix = strings.Repeat(" ", len(prefix))
			}
			b.WriteString(prefix + line + "\n")
		}
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
