// Package report renders the Report of a conformance run: a text table
// grouped by area (WriteText), JSON (WriteJSON), JUnit XML for CI systems
// (WriteJUnit) and one self-contained HTML page with the HTTP exchanges
// behind each verdict that is not a pass (WriteHTML). Package conformance
// produces the Report, with its secrets already masked; this package only
// lays it out, so every format shows the same verdicts and none can show a
// secret the run masked.
//
//	rep := conformance.Run(ctx, target, conformance.Options{})
//	_ = report.WriteText(os.Stdout, rep, report.TextOptions{Color: report.ColorFromEnv(os.Getenv, isTerminal)})
package report
