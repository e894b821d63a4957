package conformance

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
)

// Baseline lists checks expected to fail against a deployment, one ID per
// line; '#' starts a comment. A listed check that fails does not fail the run;
// a listed check that passes does (the entry is stale and must go).
type Baseline struct {
	ids   []string
	index map[string]bool
}

var baselineID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z]+-[0-9]+$`) }) // compiled on first use, not at start-up

// ParseBaseline reads a baseline.
func ParseBaseline(r io.Reader) (*Baseline, error) {
	b := &Baseline{index: map[string]bool{}}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		id := strings.TrimSpace(line)
		if id == "" {
			continue
		}
		if !baselineID().MatchString(id) {
			return nil, fmt.Errorf("baseline line %d: %q is not a check ID", n, id)
		}
		if !b.index[id] {
			b.index[id] = true
			b.ids = append(b.ids, id)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading baseline: %w", err)
	}
	return b, nil
}

// LoadBaseline reads a baseline file.
func LoadBaseline(path string) (*Baseline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening baseline: %w", err)
	}
	defer f.Close()
	b, err := ParseBaseline(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// Has reports whether id is listed.
func (b *Baseline) Has(id string) bool { return b != nil && b.index[id] }

// IDs returns the listed IDs in file order.
func (b *Baseline) IDs() []string {
	if b == nil {
		return nil
	}
	return append([]string(nil), b.ids...)
}
