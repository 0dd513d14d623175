package main

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"go.uber.org/goleak"
)

// leakCheck runs the tests and then fails the binary if goroutines leaked,
// as goleak.VerifyTestMain does; testscript.Main needs to own TestMain.
type leakCheck struct{ m *testing.M }

func (l leakCheck) Run() int {
	code := l.m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			return 1
		}
	}
	return code
}

func TestMain(m *testing.M) {
	// The pseudo-terminal test runs this binary as tpipe itself.
	if os.Getenv("TPIPE_TEST_MAIN") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	testscript.Main(leakCheck{m}, map[string]func(){
		"tpipe": func() { os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI sessions in testdata/script: each .txtar file is
// a readable session of commands, their output and their status.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			e.Setenv("LC_ALL", "C")
			e.Setenv("TPIPE_HISTORY", e.WorkDir+"/.history")
			return nil
		},
	})
}
