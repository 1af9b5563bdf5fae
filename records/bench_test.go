package records

import (
	"fmt"
	"testing"
)

// Run: go test -run '^$' -bench . -benchmem ./records/

func BenchmarkConvert(b *testing.B) {
	for _, bc := range []struct{ from, to string }{{"Gi", "Mi"}, {"G", "Mi"}, {"Mi", "Mi"}, {"p", "Pi"}} {
		b.Run(fmt.Sprintf("%s_to_%s", bc.from, bc.to), func(b *testing.B) {
			var sink int64
			for i := 0; b.Loop(); i++ {
				v, err := Convert(bc.from, bc.to, int64(i))
				if err != nil {
					b.Fatal(err)
				}
				sink += v
			}
			_ = sink
		})
	}
}

func BenchmarkCompare(b *testing.B) {
	for _, bc := range []struct{ a, b string }{{"Mi", "Mi"}, {"Gi", "M"}} {
		b.Run(bc.a+"_vs_"+bc.b, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := Compare(bc.a, int64(i), bc.b, 4096); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
