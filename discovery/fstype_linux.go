package discovery

import "golang.org/x/sys/unix"

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
}

// sharedFileSystem names the file system of the open directory fd when other hosts can see it
// too; "" for a local one, or when statfs fails (the open and lock calls then say what is wrong).
func sharedFileSystem(fd int) string {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return ""
	}
	return sharedFileSystemName(int64(st.Type))
}

// sharedFileSystemName names the shared file system of statfs type t; "" for any other.
func sharedFileSystemName(t int64) string { return sharedFileSystems[t&0xffffffff] }
