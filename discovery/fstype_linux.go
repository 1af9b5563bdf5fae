package discovery

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// sharedFileSystems are the file systems whose files other hosts see too (f_type of statfs(2), from
// the kernel's magic numbers): network and cluster file systems.
var sharedFileSystems = map[int64]string{
	0x6969:     "NFS",
	0x517b:     "SMB",
	0xff534d42: "CIFS",
	0xfe534d42: "SMB2",
	0x00c36400: "CephFS",
	0x5346414f: "AFS",
	0x6b414653: "AFS",
	0x73757245: "Coda",
	0x0bd00bd0: "Lustre",
	0x47504653: "GPFS",
	0x01161970: "GFS2",
	0x7461636f: "OCFS2",
	0x01021997: "9p", // a directory of another kernel: a VM's host, or the guests of one
}

// sharedFileSystemTypes are the same by the type name of /proc/self/mountinfo, which also names what
// statfs cannot tell apart: the cluster file systems without a magic number in the kernel's headers,
// the network file systems in userspace (FUSE's magic number is the same for all, local ones included:
// the name carries the subtype), and virtiofs (FUSE to another kernel).
var sharedFileSystemTypes = map[string]string{
	"beegfs":            "BeeGFS",
	"fhgfs":             "BeeGFS",
	"orangefs":          "OrangeFS",
	"pvfs2":             "OrangeFS",
	"panfs":             "PanFS",
	"vboxsf":            "a VirtualBox shared folder",
	"virtiofs":          "virtiofs",
	"fuse.glusterfs":    "GlusterFS",
	"fuse.ceph-fuse":    "CephFS",
	"fuse.ceph":         "CephFS",
	"fuse.sshfs":        "SSHFS",
	"fuse.s3fs":         "s3fs",
	"fuse.juicefs":      "JuiceFS",
	"fuse.gcsfuse":      "gcsfuse",
	"fuse.rclone":       "rclone",
	"fuse.fuse_dfs":     "HDFS (fuse_dfs)",
	"fuse.alluxio-fuse": "Alluxio",
	"fuse.mfs":          "MooseFS",
	"fuse.lizardfs":     "LizardFS",
}

// sharedFileSystem names the file system of the open directory fd when other hosts can see it
// too; "" for a local one, or when statfs fails (the open and lock calls then say what is wrong).
func sharedFileSystem(fd int) string {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return ""
	}
	if name := sharedFileSystemName(int64(st.Type)); name != "" {
		return name
	}
	return sharedFileSystemTypes[mountType(fd)]
}

// sharedFileSystemName names the shared file system of statfs type t; "" for any other.
func sharedFileSystemName(t int64) string { return sharedFileSystems[t&0xffffffff] }

// mountType is the type, as /proc/self/mountinfo names it ("ext4", "fuse.sshfs"), of the mount the open
// file fd is on; "" when it cannot be told.
func mountType(fd int) string {
	fdinfo, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		return ""
	}
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	return mountTypeOf(string(fdinfo), string(mountinfo))
}

// mountTypeOf finds the mount of a /proc/<pid>/fdinfo/<fd> text (its mnt_id line) in a mountinfo text
// and returns its type: the field after " - ". "" when either has no such line.
func mountTypeOf(fdinfo, mountinfo string) string {
	var id string
	for _, line := range strings.Split(fdinfo, "\n") {
		if v, ok := strings.CutPrefix(line, "mnt_id:"); ok {
			id = strings.TrimSpace(v)
		}
	}
	if id == "" {
		return ""
	}
	for _, line := range strings.Split(mountinfo, "\n") {
		left, right, ok := strings.Cut(line, " - ")
		lf, rf := strings.Fields(left), strings.Fields(right)
		if ok && len(lf) > 0 && lf[0] == id && len(rf) > 0 {
			return rf[0]
		}
	}
	return ""
}
