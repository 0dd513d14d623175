//go:build !linux

package runner

import (
	"errors"
	"os"
)

var errNoUnnamed = errors.New("no unnamed files")

func openUnnamed(dir string, mode os.FileMode) (*os.File, error) { return nil, errNoUnnamed }

func linkUnnamed(f *os.File, path string) error { return errNoUnnamed }

// pidGone cannot tell here: nothing is taken for gone.
func pidGone(pid int) bool { return false }
