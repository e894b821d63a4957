package root

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// suggestFlags names the command's flags within edit distance 2 of the
// unknown one in err ("did you mean --client-id?"), or "". Cobra suggests
// mistyped commands, never mistyped flags.
func suggestFlags(c *cobra.Command, err error) string {
	// pflag's "unknown flag: --name" (a shorthand is one letter: nothing
	// to match it against).
	typed, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok || typed == "" {
		return ""
	}
	var close []string
	seen := map[string]bool{}
	visit := func(fl *pflag.Flag) {
		if fl.Hidden || seen[fl.Name] {
			return
		}
		seen[fl.Name] = true
		if levenshtein(typed, fl.Name) <= 2 {
			close = append(close, "--"+fl.Name)
		}
	}
	c.LocalFlags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	if len(close) == 0 {
		return ""
	}
	return "did you mean " + strings.Join(close, " or ") + "?"
}

// levenshtein is the edit distance between a and b (insertions,
// deletions, substitutions), over bytes: flag names are ASCII.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
