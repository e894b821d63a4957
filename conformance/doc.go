// Package conformance checks a deployment of the mcpauth service contract
// (docs/service.md, completed by docs/decisions.md) over HTTP, check by check. It never
// imports the reference server: every check talks to a base URL and reads
// status codes, headers and bodies off the wire, decoding them member by
// member, so a renamed field fails the run instead of passing. The happy
// paths (registering the suite's clients, authorize and exchange, device
// codes and polls) are sent by package flows, the client the CLI is, and
// judged from the recorded answers; a check builds a raw request only to
// send what a correct client never would.
//
// A Check is small and focused, has a stable ID (DISC-01, TOKEN-11, …) and
// says where its rule comes from. Checks that need a user to approve a consent
// screen or a device code (Target.Approver), a movable server clock
// (Target.Clock), the API key or a browser session declare it in Needs; the
// runner skips them, with the reason, when the Target cannot provide it.
// Nothing passes silently.
//
// Client ID Metadata Document checks serve their documents from a
// DocumentHost, a TLS listener on 127.0.0.1 the suite starts, and run only
// when the target fetches from loopback and trusts it (Target.CIMDPrivate);
// otherwise CIMD-07 checks the target's SSRF guard. The suite never hands
// the target a URL off loopback.
//
// Catalogue is the contract profile; MCPCatalogue (ProfileChecks("mcp")) is
// the mcp profile, the MCP authorization requirements of any MCP server,
// discovered from Target.BaseURL as the MCP endpoint.
//
// Run runs the catalogue: independent checks in parallel, then, one at a time,
// the checks that move the clock or change shared state. The Report is in
// catalogue order; a Baseline lists expected failures. Package report
// renders a Report as a text table, JSON, JUnit XML or an HTML page, and
// package approve has the approvers (a form-driving browser, a person at
// the terminal, a program of the user's).
//
//	a, _ := approve.NewFormApprover(base, "conformance", nil)
//	rep := conformance.Run(ctx, conformance.Target{BaseURL: base, Approver: a, Clock: &conformance.HTTPClock{URL: clockURL}}, conformance.Options{})
//	_ = report.WriteText(os.Stdout, rep, report.TextOptions{Color: true})
//	os.Exit(rep.ExitCode())
package conformance
