package place

import (
	"errors"
	"io/fs"
	"os"
)

// MoveTo moves the claimed token into place q as a ready token of the same
// name (a job that keeps failing goes to a place of failures), replacing a
// token of that name there. It returns ErrLost if the token was taken
// back. q must be on the same file system.
func (c *Claim) MoveTo(q *Place) error {
	defer c.forget()
	err := os.Rename(c.Path(), q.path(c.name))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Lstat(c.Path()); errors.Is(serr, fs.ErrNotExist) {
			return ErrLost
		}
	}
	if err != nil {
		return err
	}
	if !q.w.o.NoSync {
		return syncDir(q.dir)
	}
	return nil
}
