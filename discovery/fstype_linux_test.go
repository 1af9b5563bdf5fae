package discovery

import (
	"os"
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
