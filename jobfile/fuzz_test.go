package jobfile

import (
	"errors"
	"testing"
)

// FuzzParse: any input is parsed or refused with an *Error naming the file; never a panic, and a
// parsed job has at least one role, each with a command and a count within the hard bound.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(`{"roles": {"w": {"count": 4, "command": ["true"]}}, "gang": true}`))
	f.Add([]byte("roles:\n  a: &r\n    command: x\n  b: *r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := Parse("fuzz.yaml", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.File != "fuzz.yaml" {
				t.Fatalf("error %v is no *Error naming the file", err)
			}
			return
		}
		if len(j.Roles) == 0 {
			t.Fatal("a job without roles was accepted")
		}
		total := 0
		for _, r := range j.Roles {
			if len(r.Command) == 0 || r.Count < 1 {
				t.Fatalf("role %+v accepted", r)
			}
			total += r.Count
		}
		if total > 100000 {
			t.Fatalf("%d ranks accepted", total)
		}
	})
}
