package jobs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Failure is a job that failed for good, as its failed place keeps it:
//
//	FAILED/NAME          the job's (first) token, as it came in
//	FAILED/NAME.stderr   what the job wrote on stderr in its last try
//	FAILED/NAME.status   this record, one "key value" line each
//
// To run the job again, move FAILED/NAME back into its input place.
type Failure struct {
	Name   string    // the token's name
	Stage  string    // the stage it failed in
	Status int       // its last exit status; -1: it could not run
	Tries  int       // how many times it ran
	Owner  string    // the worker that gave up on it (place.Owner.String)
	Time   time.Time // when
}

// Suffixes of the files kept beside a failed token.
const (
	StderrSuffix = ".stderr"
	StatusSuffix = ".status"
)

// writeFailure writes f's status and stderr beside its token in fp.
func writeFailure(fp Place, f Failure, stderr []byte) error {
	if err := fp.Put(f.Name+StderrSuffix, func(w io.Writer) error { _, err := w.Write(stderr); return err }); err != nil {
		return err
	}
	return fp.Put(f.Name+StatusSuffix, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "status %d\ntries %d\nstage %s\nowner %s\ntime %s\n",
			f.Status, f.Tries, f.Stage, f.Owner, f.Time.UTC().Format(time.RFC3339Nano))
		return err
	})
}

// Failures lists the failed jobs of the failed place dir, by name: every
// token with a NAME.status beside it.
func Failures(dir string) ([]Failure, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Failure
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), StatusSuffix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		f, err := readFailure(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		f.Name = name
		out = append(out, f)
	}
	return out, nil
}

func readFailure(path string) (Failure, error) {
	var f Failure
	file, err := os.Open(path)
	if err != nil {
		return f, err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		switch k {
		case "status":
			f.Status, err = strconv.Atoi(v)
		case "tries":
			f.Tries, err = strconv.Atoi(v)
		case "stage":
			f.Stage = v
		case "owner":
			f.Owner = v
		case "time":
			f.Time, err = time.Parse(time.RFC3339Nano, v)
		}
		if err != nil {
			return f, fmt.Errorf("%s: %s: %w", path, k, err)
		}
	}
	return f, sc.Err()
}
