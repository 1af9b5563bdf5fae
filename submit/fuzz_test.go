package submit

import (
	"strconv"
	"strings"
	"testing"
)

func FuzzParseMemoryMB(f *testing.F) {
	for _, s := range []string{"4096", "4g", "512MiB", "2048k", "1048576b", "1.5g", "", "9223372036854775807t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mb, err := ParseMemoryMB(s)
		if err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("error %q does not name the input %q", err, s)
			}
			return
		}
		if mb < 0 {
			t.Fatalf("%q: negative %d", s, mb)
		}
	})
}

func FuzzParseResource(f *testing.F) {
	for _, s := range []string{"yarn.io/gpu=2", "memory-mb=4Gi", "gpu=1", "=1", "a=", "x=1 parsecs", "com.acme/bw=10k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, q, err := ParseResource(s)
		if err != nil {
			return
		}
		if name == "" || q.Value < 0 {
			t.Fatalf("%q: name %q value %d", s, name, q.Value)
		}
	})
}
