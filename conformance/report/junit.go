package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpauth/mcpauth/conformance"
)

// JUnit XML as CI systems read it: one testsuite per area, one testcase per
// check. Skips are <skipped>, Must failures <failure>. A Should failure is a
// passing testcase with a "verdict=warn" property and a WARNING line in
// <system-out>, so it is visible without turning the build red; an Info
// finding likewise with INFO. An inconclusive or blocked check is <skipped>.
// A failure the baseline expects is reported as skipped; a stale baseline entry as a failure.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name       string        `xml:"name,attr"`
	Classname  string        `xml:"classname,attr"`
	Time       string        `xml:"time,attr"`
	Properties *junitProps   `xml:"properties,omitempty"`
	Failure    *junitMessage `xml:"failure,omitempty"`
	Skipped    *junitSkipped `xml:"skipped,omitempty"`
	SystemOut  string        `xml:"system-out,omitempty"`
}

type junitProps struct {
	Props []junitProp `xml:"property"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// WriteJUnit writes the report as JUnit XML.
func WriteJUnit(w io.Writer, r *conformance.Report) error {
	stale := map[string]string{}
	for _, s := range r.Stale {
		id, _, _ := strings.Cut(s, ":")
		stale[id] = s
	}
	out := junitSuites{Name: "mcpauth conformance " + r.Target, Time: seconds(r.Duration)}
	for _, results := range byArea(r.Results) {
		s := junitSuite{Name: results[0].Area, Timestamp: r.Started.UTC().Format(time.RFC3339)}
		var spent time.Duration
		for _, res := range results {
			spent += res.Duration
			c := junitCase{
				Name:      res.ID + " " + res.Title,
				Classname: "conformance." + res.Area,
				Time:      seconds(res.Duration),
				Properties: &junitProps{Props: []junitProp{
					{Name: "verdict", Value: string(res.Verdict)},
					{Name: "severity", Value: res.Severity.String()},
					{Name: "source", Value: res.Source},
				}},
			}
			switch {
			case res.Expected:
				c.Properties.Props = append(c.Properties.Props, junitProp{Name: "expected_failure", Value: "true"})
				c.Skipped = &junitSkipped{Message: "expected failure (baseline): " + res.Reason}
			case res.Verdict == conformance.VerdictFail:
				c.Failure = &junitMessage{Message: res.Reason, Type: "must", Body: res.Reason}
			case res.Verdict == conformance.VerdictWarn:
				c.SystemOut = "WARNING: " + res.Reason
			case res.Verdict == conformance.VerdictSkip:
				c.Skipped = &junitSkipped{Message: res.Reason}
			case res.Verdict == conformance.VerdictInconclusive:
				// Not judged: skipped, so no CI turns red on the suite's own limits.
				c.Skipped = &junitSkipped{Message: "inconclusive: " + res.Reason}
				if res.Flag != "" {
					c.Properties.Props = append(c.Properties.Props, junitProp{Name: "flag", Value: res.Flag})
				}
			case res.Verdict == conformance.VerdictBlocked:
				c.Skipped = &junitSkipped{Message: res.Reason} // "blocked by MCP-xx: …"
				c.Properties.Props = append(c.Properties.Props, junitProp{Name: "blocked_by", Value: res.BlockedBy})
			case res.Verdict == conformance.VerdictInfo:
				c.SystemOut = "INFO: " + res.Reason
			}
			if len(res.Exchanges) > 0 {
				// What the server answered, for the reader of a CI log.
				if c.SystemOut != "" {
					c.SystemOut += "\n\n"
				}
				c.SystemOut += "HTTP exchanges (secrets redacted):\n" + transcriptText(res.Exchanges)
			}
			if msg, ok := stale[res.ID]; ok {
				c.Failure = &junitMessage{Message: msg, Type: "stale-baseline", Body: msg}
			}
			s.Tests++
			if c.Failure != nil {
				s.Failures++
			}
			if c.Skipped != nil {
				s.Skipped++
			}
			s.Cases = append(s.Cases, c)
		}
		s.Time = seconds(spent)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Skipped += s.Skipped
		out.Suites = append(out.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("writing JUnit report: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("writing JUnit report: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("writing JUnit report: %w", err)
	}
	return nil
}

// transcriptText renders exchanges one after another.
func transcriptText(exs []conformance.Exchange) string {
	parts := make([]string, len(exs))
	for i, x := range exs {
		parts[i] = x.Text()
	}
	return strings.Join(parts, "\n")
}
