// Ory Hydra's own main (github.com/ory/hydra/v2, main.go), built from this
// module so that its go.mod and go.sum pin Hydra and every dependency for
// mcpauth's interop lab (interop/hydra_test.go): `go install
// github.com/ory/hydra/v2@version` refuses Hydra's go.mod, whose replace
// directives this go.mod repeats.
package main

import "github.com/ory/hydra/v2/cmd"

func main() { cmd.Execute() }
