// Package creds owns the CLI's stored credentials between a token response
// and the bytes in storage: the one mapping from a flows.Token to the
// stored Bundle, loading a credential for a server, refreshing it under
// the cross-process entry lock, renewing machine tokens by running their
// grant again, restoring DPoP keys, and the registration cache adapter.
//
// It sits between flows (the protocol) and keyring (sealed bytes under
// (server, account) keys): keyring knows no OAuth vocabulary, and this
// package prints nothing and reads no environment of its own. Everything
// is injected through Keeper; failures carry the typed errors in
// errors.go, which the CLI maps to exit codes in one place.
package creds
