package discovery

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestSharedFileSystemName(t *testing.T) {
	for _, tc := range []struct {
		fsType int64
		want   string
	}{
		{unix.NFS_SUPER_MAGIC, "NFS"},
		{unix.SMB_SUPER_MAGIC, "SMB"},
		{unix.CIFS_SUPER_MAGIC, "CIFS"},
		{unix.SMB2_SUPER_MAGIC, "SMB2"},
		{unix.CEPH_SUPER_MAGIC, "CephFS"},
		{unix.AFS_SUPER_MAGIC, "AFS"},
		{unix.AFS_FS_MAGIC, "AFS"},
		{unix.CODA_SUPER_MAGIC, "Coda"},
		{unix.OCFS2_SUPER_MAGIC, "OCFS2"},
		{0x0bd00bd0, "Lustre"}, // not in x/sys/unix
		{0x47504653, "GPFS"},
		{0x01161970, "GFS2"},
		// statfs's f_type is signed on some architectures: CIFS's magic arrives negative there
		{int64(int32(-0x00acb2be)), "CIFS"},
		{unix.EXT4_SUPER_MAGIC, ""},
		{unix.XFS_SUPER_MAGIC, ""},
		{unix.BTRFS_SUPER_MAGIC, ""},
		{unix.TMPFS_MAGIC, ""},
		{unix.OVERLAYFS_SUPER_MAGIC, ""},
		{unix.FUSE_SUPER_MAGIC, ""},
		{unix.V9FS_MAGIC, "9p"},
	} {
		assert.Equal(t, tc.want, sharedFileSystemName(tc.fsType), "f_type %#x", tc.fsType)
	}
}

// The file systems the tests run on are local, and so is the default /var/tmp: not refused.
func TestLocalFileSystemsAreNotShared(t *testing.T) {
	for _, dir := range []string{t.TempDir(), "/var/tmp", "/dev/shm"} {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		assert.Empty(t, sharedFileSystem(fd), dir)
		require.NoError(t, unix.Close(fd))
	}
}

// TestSharedFileSystemByMountType: file systems other hosts share that statfs cannot name (FUSE's one
// magic number covers sshfs and GlusterFS as well as local ones; BeeGFS has none in the kernel's
// headers) are found by their type in mountinfo, the mount found by the descriptor's mnt_id.
func TestSharedFileSystemByMountType(t *testing.T) {
	const mountinfo = `22 1 0:21 / /proc rw,nosuid - proc proc rw
29 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
41 29 0:38 / /shared rw,relatime shared:20 - fuse.glusterfs gluster1:/vol rw,user_id=0
42 29 0:39 / /scratch rw - beegfs beegfs_nodev rw,cfgFile=/etc/beegfs/beegfs-client.conf
43 29 0:40 / /home/u/remote rw - fuse.sshfs u@host:/ rw
44 29 0:41 / /var/lib/containers rw - fuse.fuse-overlayfs fuse-overlayfs rw
45 29 0:42 / /mnt/vm rw - virtiofs share rw
`
	for _, tc := range []struct {
		fdinfo, wantType, wantShared string
	}{
		{"pos:\t0\nflags:\t0100000\nmnt_id:\t41\n", "fuse.glusterfs", "GlusterFS"},
		{"mnt_id:\t42\n", "beegfs", "BeeGFS"},
		{"mnt_id:\t43\n", "fuse.sshfs", "SSHFS"},
		{"mnt_id:\t45\n", "virtiofs", "virtiofs"},
		{"mnt_id:\t44\n", "fuse.fuse-overlayfs", ""}, // a rootless container's local root
		{"mnt_id:\t29\n", "ext4", ""},
		{"mnt_id:\t4\n", "", ""}, // a prefix of no id
		{"pos:\t0\n", "", ""},    // a kernel before mnt_id
	} {
		got := mountTypeOf(tc.fdinfo, mountinfo)
		assert.Equal(t, tc.wantType, got, tc.fdinfo)
		assert.Equal(t, tc.wantShared, sharedFileSystemTypes[got], tc.fdinfo)
	}
}

// TestMountTypeOfARealDirectory: the descriptor's mount is found on this kernel.
func TestMountTypeOfARealDirectory(t *testing.T) {
	fd, err := unix.Open(t.TempDir(), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	var st unix.Statfs_t
	require.NoError(t, unix.Fstatfs(fd, &st))
	got := mountType(fd)
	if st.Type == unix.TMPFS_MAGIC {
		assert.Equal(t, "tmpfs", got)
	} else {
		assert.NotEmpty(t, got)
	}
}

// FuzzMountTypeOf: whatever the fdinfo and mountinfo texts hold, a type found is the first field after
// " - " of a mountinfo line whose mount id is the fdinfo's mnt_id, and never holds white space.
func FuzzMountTypeOf(f *testing.F) {
	f.Add("pos:\t0\nflags:\t0100000\nmnt_id:\t41\n", "41 29 0:38 / /shared rw,relatime shared:20 - fuse.glusterfs gluster1:/vol rw\n")
	f.Add("mnt_id:\t7\n", "7 1 0:1 / /a\\040-\\040b rw - ext4 /dev/x rw\n7 1 0:1 / / rw -  - \n")
	f.Fuzz(func(t *testing.T, fdinfo, mountinfo string) {
		got := mountTypeOf(fdinfo, mountinfo)
		if got == "" {
			return
		}
		if strings.ContainsAny(got, " \t\n") {
			t.Fatalf("type %q holds white space", got)
		}
		ids := map[string]bool{} // the mount ids the fdinfo's mnt_id lines give
		for _, line := range strings.Split(fdinfo, "\n") {
			if v, ok := strings.CutPrefix(line, "mnt_id:"); ok {
				ids[strings.TrimSpace(v)] = true
			}
		}
		for _, line := range strings.Split(mountinfo, "\n") {
			left, right, ok := strings.Cut(line, " - ")
			lf, rf := strings.Fields(left), strings.Fields(right)
			if ok && len(lf) > 0 && ids[lf[0]] && len(rf) > 0 && rf[0] == got {
				return
			}
		}
		t.Fatalf("type %q is in no mountinfo line of mount id %v in %q", got, ids, mountinfo)
	})
}
