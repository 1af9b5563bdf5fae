package discovery

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAutoVendorsByKind(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind Kind
		want []Vendor
	}{
		{"gpu", KindGPU, []Vendor{VendorNVIDIA, VendorAMD}},
		{"fpga", KindFPGA, []Vendor{VendorIntelFPGA, VendorXilinx}},
		{" FPGA ", KindFPGA, []Vendor{VendorIntelFPGA, VendorXilinx}},
		{"tpu", "", autoOrder},
		{"", "", autoOrder},
	} {
		assert.Equal(t, tc.kind, KindOfName(tc.name), tc.name)
		assert.Equal(t, tc.want, AutoVendors(KindOfName(tc.name)), tc.name)
	}
	assert.Equal(t, []Vendor{VendorNVIDIA, VendorAMD}, AutoVendors(KindMIG))
	all := AutoVendors("")
	all[0] = "changed"
	assert.Equal(t, VendorNVIDIA, autoOrder[0], "callers get a copy")
}
