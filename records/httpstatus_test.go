package records

import (
	"net/http"
	"testing"
)

func TestStatusTextIsNetHTTPs(t *testing.T) {
	for code := 0; code < 1000; code++ {
		if got, want := statusText(code), http.StatusText(code); got != want {
			t.Errorf("statusText(%d) = %q, net/http says %q", code, got, want)
		}
	}
	for got, want := range map[int]int{statusBadRequest: http.StatusBadRequest, statusUnauthorized: http.StatusUnauthorized,
		statusForbidden: http.StatusForbidden, statusNotFound: http.StatusNotFound, statusMethodNotAllowed: http.StatusMethodNotAllowed} {
		if got != want {
			t.Errorf("status constant %d, net/http's is %d", got, want)
		}
	}
}
