package pollmode

import (
	"testing"

	"github.com/gocached/gocached/internal/testproc"
)

func TestMain(m *testing.M) { testproc.VerifyMain(m) }
