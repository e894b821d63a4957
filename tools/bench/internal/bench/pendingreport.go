package bench

import (
	"fmt"
	"io"
)

// WritePending writes the pending mode's results as a Markdown table, the
// command that measured them first.
func WritePending(w io.Writer, command string, rs []PendingResult) error {
	if _, err := fmt.Fprintf(w, "Measured with `%s`.\n\n", command); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "| store | pending flows | seeded in s | database MiB | polls | polls/s | p50 ms | p99 ms | errors | RSS idle MiB | RSS peak MiB | GC ms | polls during GC | their p99 ms | their max ms | device code requests during GC | their max ms |\n"+
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"); err != nil {
		return err
	}
	for _, r := range rs {
		if _, err := fmt.Fprintf(w, "| %s | %d | %.1f | %.0f | %d | %.0f | %.3f | %.3f | %d | %.1f | %.1f | %.1f | %d | %.1f | %.1f | %d | %.1f |\n",
			r.Store, r.Flows, r.SeedSeconds, r.DBMiB, r.Polls, r.PollRate, r.P50ms, r.P99ms, r.Errors+r.GCErrors, r.RSSIdleMiB, r.RSSPeakMiB,
			r.GCms, r.GCPolls, r.GCP99ms, r.GCMaxms, r.GCWrites, r.GCWriteMaxms); err != nil {
			return err
		}
	}
	for _, r := range rs {
		if r.FirstError != "" {
			if _, err := fmt.Fprintf(w, "\n%s, %d flows, first error: %s\nand the server's: %s\n", r.Store, r.Flows, r.FirstError, r.ServerError); err != nil {
				return err
			}
		}
	}
	return nil
}
