package place

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing bytes [off, off+n) of f
// to disk, without waiting: the fsync at commit then finds most of the
// file written (RocksDB's bytes_per_sync does the same).
func startWriteback(f *os.File, off, n int64) {
	unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// remoteFS reports whether dir is on a file system whose changes made by
// other hosts inotify does not report: NFS, FUSE (sshfs), SMB.
func remoteFS(dir string) bool {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return true // not known: poll, which always works
	}
	switch uint32(st.Type) {
	case unix.NFS_SUPER_MAGIC, unix.FUSE_SUPER_MAGIC, unix.SMB_SUPER_MAGIC, unix.CIFS_SUPER_MAGIC,
		0xfe534d42 /* SMB2 */, 0x61636673 /* AFS */, 0x00c36400 /* Ceph */, 0x47504653 /* GPFS */, 0x0bd00bd0 /* Lustre */ :
		return true
	}
	return false
}
