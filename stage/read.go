package stage

import "github.com/colinmarc/hdfs/v2"

// HDFS returns the HDFS client of c for reading (aggregated logs), and false when c runs on a
// file system of a test instead.
func (c *Client) HDFS() (*hdfs.Client, bool) {
	h, ok := c.fs.(hdfsFS)
	return h.Client, ok
}
