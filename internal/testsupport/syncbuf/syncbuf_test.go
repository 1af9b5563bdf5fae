package syncbuf

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBufferConcurrentWriteAndRead(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 100 {
			n, err := b.Write([]byte("x\n"))
			assert.NoError(t, err)
			assert.Equal(t, 2, n)
		}
	}()
	for range 100 {
		s := b.String()
		require.Zero(t, len(s)%2, "a read sees whole writes only: %q", s)
	}
	wg.Wait()
	assert.Equal(t, strings.Repeat("x\n", 100), b.String())
}
