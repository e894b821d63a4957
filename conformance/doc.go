// Package conformance checks a deployment of the mcpauth service contract
// (/work/shared/spec/service.md, completed by decisions.md) over HTTP, check by
// check. It never imports the reference server: every check talks to a base URL
// and reads status codes, headers and bodies off the wire, decoding them into
// types declared here, so a renamed field fails the run instead of passing.
//
// A Check is small and focused. Checks that need a human (or a page-driving
// Approver) to approve a consent screen or a device code, a movable test clock,
// an API key or a browser session declare it in Needs; the runner skips them,
// with the reason, when the Target cannot provide it. Nothing passes silently.
package conformance
