// Package jobstest holds what the tests of the job engine and of its
// front ends share: folders of jobs written and read back. It is for
// tests only.
package jobstest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Deadline bounds every test's wait: a loaded machine is slow, not this
// slow.
const Deadline = 60 * time.Second

// Ctx is a context that ends at Deadline or with the test.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Deadline)
	t.Cleanup(cancel)
	return ctx
}

// Drop writes jobs into dir as files written a minute ago: an intake
// takes them as complete when it first sees them (their modification
// time is past the settle time).
func Drop(t testing.TB, dir string, jobs map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ago := time.Now().Add(-time.Minute)
	for name, text := range jobs {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, ago, ago); err != nil {
			t.Fatal(err)
		}
	}
}

// Files reads the regular files of dir that are not the protocol's.
func Files(t testing.TB, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// Stray lists what is left in the protocol's directories of the places
// under root: claims, temporary files, locks.
func Stray(t testing.TB, root string) []string {
	t.Helper()
	var left []string
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		for _, part := range strings.Split(filepath.Dir(rel), string(filepath.Separator)) {
			if part == ".tmp" || part == ".claim" || part == ".lock" {
				left = append(left, rel)
				break
			}
		}
		return nil
	})
	return left
}

// Tree lists the files under dir with their contents, one "path=text" a
// line, sorted; empty protocol directories are left out.
func Tree(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if ents, _ := os.ReadDir(p); len(ents) == 0 && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		b, _ := os.ReadFile(p)
		lines = append(lines, rel+"="+strings.TrimSpace(string(b)))
		return nil
	})
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
