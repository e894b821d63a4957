// Package creds keeps MCP logins for a program: store what a login got
// (SaveLogin), then ask a Keeper for the credential to send to a server
// (Keeper.Fresh), refreshed first when it is about to expire; when the
// server refuses it anyway, Keeper.Retry refreshes once. Refreshes take a
// lock per stored entry that holds across processes, so several programs
// sharing one store (the mcpauth CLI among them) never spend one refresh
// token twice. Machine logins (client credentials, JWT bearer,
// enterprise) are renewed by running their grant again; DPoP-bound
// tokens come with their key.
//
// Storage is a Store: *keyring.Store (the OS keyring and sealed files,
// shared with the CLI) or any type with its four methods. Everything
// else is injected through Keeper: the HTTP client, the clock, a warning
// sink. The package prints nothing and reads no environment of its own.
//
// Failures match one of the kinds in errors.go (ErrAuthRequired,
// ErrStorage, ErrInput, ErrRefresh) with errors.Is; one that only a new
// login fixes is also a *LoginError naming the server. Messages say what
// happened and name no command: the caller says how to log in.
//
// A Go MCP SDK client uses creds through the adapter in creds/mcpsdk.
// The bundle format (Bundle) is what keyring seals; entries any release
// wrote load in every later one.
package creds
