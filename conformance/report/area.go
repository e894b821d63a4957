package report

import "github.com/mcpauth/mcpauth/conformance"

// byArea groups results by area, the areas in the order they first appear
// and the results of each in their order.
func byArea(results []conformance.Result) [][]conformance.Result {
	var groups [][]conformance.Result
	index := map[string]int{}
	for _, res := range results {
		i, ok := index[res.Area]
		if !ok {
			i = len(groups)
			index[res.Area] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], res)
	}
	return groups
}
