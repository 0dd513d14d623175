package recfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// openTmpfile opens an unnamed file in dir with O_TMPFILE. File systems
// without it answer EOPNOTSUPP (EISDIR on kernels before 3.11, which read
// the flag as O_DIRECTORY); both mean: fall back to a named file.
func openTmpfile(dir string) (*os.File, error) {
	f, err := os.OpenFile(dir, unix.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, 0o600)
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) {
			return nil, errNoTmpfile
		}
		return nil, err
	}
	return f, nil
}
