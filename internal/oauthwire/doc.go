// Package oauthwire holds the wire-level pieces of OAuth that package flows
// uses and that the CLI, the conformance suite and the benchmark call too:
// bounded response reading, WWW-Authenticate parsing, scope arithmetic,
// URL rules and the loopback callback check. It imports nothing of
// mcpauth, so flows can import it; it carries no stability promise.
package oauthwire
