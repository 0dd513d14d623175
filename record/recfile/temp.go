package recfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// CreateTemp creates a new file for reading and writing in dir (""
// means os.TempDir()) that only this process can reach: mode 0600, and no
// name once it is open, so that it goes away with its last descriptor
// however the process ends, a SIGKILL included. On Linux the file is made
// with O_TMPFILE and never has a name; where the file system lacks
// O_TMPFILE, and on other systems, it is created under a random name and
// unlinked at once. The caller closes it.
func CreateTemp(dir string) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	if f, err := openTmpfile(dir); err == nil || !errors.Is(err, errNoTmpfile) {
		if err != nil {
			return nil, fmt.Errorf("temp file in %s: %w", dir, err)
		}
		return f, nil
	}
	f, err := os.CreateTemp(dir, ".tpipe-*")
	if err != nil {
		return nil, err
	}
	// Unlinking an open file is what makes it vanish with the process. If
	// it fails (not possible on POSIX systems) the file is still usable.
	os.Remove(f.Name())
	return f, nil
}

// errNoTmpfile says the system or file system has no O_TMPFILE.
var errNoTmpfile = errors.New("no O_TMPFILE")

// WriteAtomic writes a record file at path, so that path holds either its
// old content or the whole new file, even after a crash: write (given a
// Writer in codec c) fills a file under a temporary name in the same
// directory, which is synced, renamed to path, and the directory synced.
// On failure the temporary file is removed and path is untouched. The
// temporary name starts with ".tmp-": a crash between create and rename
// leaves such a file, which the owner of the directory clears.
func WriteAtomic(path string, c Codec, write func(w *Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, ".tmp-"+base+"-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := NewWriter(f, c, 0)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
