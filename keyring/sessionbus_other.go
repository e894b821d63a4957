//go:build !(linux || freebsd || openbsd || netbsd || dragonfly)

package keyring

// macOS and Windows keyrings need no session bus.
type osEnv struct{}

func processEnv() osEnv { return osEnv{} }

func useSessionBus(osEnv) error { return nil }

// diagnose has nothing to add where there is no Secret Service.
func (OSBackend) diagnose() error { return nil }
