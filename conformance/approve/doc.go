// Package approve holds the approvers of the conformance suite: what acts
// as the test user when a check needs a consent screen approved, a device
// code confirmed or the API key read (conformance.Approver).
//
// FormApprover drives a service's own HTML pages as a browser without
// JavaScript would, ManualApprover asks a person at the terminal, and
// CommandApprover hands each authorization request to a program of the
// user's (`mcpauth conformance --browser-command`).
//
//	a, err := approve.NewFormApprover(base, "conformance", nil)
//	rep := conformance.Run(ctx, conformance.Target{BaseURL: base, Approver: a}, conformance.Options{})
package approve
