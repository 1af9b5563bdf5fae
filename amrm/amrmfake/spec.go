package amrmfake

import (
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
)

// Spec returns a job spec for this cluster's application: n ranks of 512 MiB, 1 vcore and 1
// yarn.io/gpu each running "true", the scheduler address of the cluster, the binary as an HDFS
// file of the staging directory, and staging (a local directory) as the staging directory.
// Tests change the fields they are about.
func (c *Cluster) Spec(n int, staging string) *jobspec.Spec {
	return &jobspec.Spec{
		Version: jobspec.Version, Name: "test", User: "alice",
		SchedulerAddresses: []string{c.SchedulerAddr},
		Containers:         n,
		Priority:           1,
		Resource: []jobspec.Quantity{
			{Name: records.MemoryMB, Value: 512, Units: "Mi"},
			{Name: records.VCores, Value: 1},
			{Name: records.GPU, Value: 1},
		},
		Devices: &jobspec.Devices{Kind: "gpu", Amount: 1},
		Command: []string{"true"},
		Binary: jobspec.LocalFile{Name: jobspec.BinaryName, URL: StagedURL("yarn-er"),
			Size: 6, MtimeMillis: 1700000001000, Type: records.LocalFile},
		StagingDir: "file://" + staging,
	}
}

// StagedURL is the HDFS URL of name in the staging directory of AppID, as Spec names the binary.
func StagedURL(name string) string {
	return "hdfs://nn:8020/user/alice/.yarn-er/" + AppID + "/" + name
}
