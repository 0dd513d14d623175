package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// benchCommand is `tpipe bench [-quick] [-out DIR] [-runs N]`: the
// benchmark suite, built and run as `go run ./bench` would, from the checkout of tpipe the
// working directory is in (see bench/README.md). The suite is not linked
// into tpipe, which ships without it. `tpipe bench -video` and
// `tpipe bench -jobs` run this tpipe, not one built from the checkout (a
// -tpipe given after bench still wins). Ctrl-C reaches the suite as well
// (one process group), which stops between runs. The suite runs in the
// working directory, as go run would, so that -out DIR means the same.
func benchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root, ok := checkoutRoot()
	if !ok {
		fmt.Fprintln(stderr, "tpipe bench: run go run ./bench from a checkout of tpipe (github.com/tpipe/tpipe): the suite is not part of this binary")
		return 2
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintf(stderr, "tpipe bench: the suite runs as go run ./bench, and go is not in PATH\n")
		return 2
	}
	// go run would print "exit status 2" and exit 1: the suite's own
	// status (2 for a usage error) is kept by building it, then running it.
	tmp, err := os.MkdirTemp("", "tpipe-bench-")
	if err != nil {
		fmt.Fprintf(stderr, "tpipe bench: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	suite := filepath.Join(tmp, "bench")
	build := exec.CommandContext(ctx, goTool, "build", "-o", suite, "./bench")
	build.Dir = root
	build.Stdout, build.Stderr = stderr, stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(stderr, "tpipe bench: go build ./bench in %s: %v\n", root, err)
		return 1
	}
	if exe, err := os.Executable(); err == nil {
		args = append([]string{"-tpipe", exe}, args...)
	}
	cmd := exec.Command(suite, args...)
	cmd.Args[0] = "bench"
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		return ee.ExitCode()
	}
	fmt.Fprintf(stderr, "tpipe bench: %v\n", err)
	return 1
}

// checkoutRoot returns the root of the checkout of tpipe that holds the
// working directory: the nearest directory up whose go.mod is module
// github.com/tpipe/tpipe and that has the suite (bench/main.go).
func checkoutRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if modulePath(filepath.Join(dir, "go.mod")) == "github.com/tpipe/tpipe" {
			_, err := os.Stat(filepath.Join(dir, "bench", "main.go"))
			return dir, err == nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", false
		}
		dir = up
	}
}

// modulePath returns the module path a go.mod declares, or "".
func modulePath(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
