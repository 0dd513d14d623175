//go:build !linux

package recfile

import "os"

func openTmpfile(dir string) (*os.File, error) { return nil, errNoTmpfile }
