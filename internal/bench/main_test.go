package bench

import (
	"os"
	"testing"

	"github.com/mcpauth/mcpauth/internal/testenv"
)

// TestMain reports PostgreSQL tests skipped for lack of the real component
// in one line (go test hides skip reasons of passing packages).
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
