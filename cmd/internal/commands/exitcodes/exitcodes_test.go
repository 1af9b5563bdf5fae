package exitcodes

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEveryExitCodeIsListed(t *testing.T) {
	long := NewCmdExitCodes().Long
	for _, want := range []string{"  0  success", "  1  an error", "  2  usage", "  3  validation", "  4  authentication",
		"  5  not enough devices", "  6  the YARN application ended FAILED", "  7  the YARN application was KILLED", "130  interrupted (SIGINT)", "143  terminated (SIGTERM)"} {
		assert.Contains(t, long, want)
	}
}
