package root_test

import (
	"os"
	"testing"

	"github.com/mcpauth/mcpauth/internal/testenv"
)

// Tests of files another user owns need root (testenv.GiveAway).
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
