// Package ext runs external commands (programs found on PATH) as tasks of
// an in-process tpipe pipeline.
//
// The ports of a task (buffer.Ports) belong to one goroutine, but a process needs
// its standard input fed while its standard output is drained; one
// goroutine doing both would deadlock as soon as both pipes fill. So one
// command is two tasks of the graph, sharing one process (a Cmd):
//
//   - the input task (one input port, no output) copies its records to the
//     process's stdin and closes it at eof;
//   - the output task (no input, one output port) cuts the process's stdout
//     into records, then waits for the process and reports its status as a
//     *task.ExitError.
//
// With Options.Stdin set there is no input task, and with Options.Stdout set
// the output task has no port and only waits. The process starts when the
// first of its tasks runs. It runs in a process group of its own, so that a
// cancelled run can stop it and everything it started: SIGTERM to the group,
// then SIGKILL if anything is still there after a short grace. KillAll
// reaches every group still running, for a program that leaves without
// waiting. On Linux the process also gets SIGKILL if tpipe dies, however it
// dies (see start_linux.go); what the process started in turn is reached
// only by the group kill, so it outlives a tpipe killed with SIGKILL.
//
// Records are lines (record.Lines); a final line without '\n' stays so.
//
// Because of its own process group, the process is not in the foreground
// group of a terminal: it does not get the terminal's SIGINT (tpipe cancels
// the run and the group gets SIGTERM instead), and if it reads a terminal it
// is stopped by SIGTTIN. Giving the terminal to a pipeline's processes is
// job control, left to the caller.
//
// The package is for Unix: it uses process groups and POSIX signals.
package ext

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/tpipe/tpipe/task"
)

// Exit statuses a shell gives a command it could not run.
const (
	// StatusNotFound is the status of a command that does not exist.
	StatusNotFound = 127
	// StatusCannotExec is the status of a command that exists but cannot be
	// executed (no permission, not a program, a directory).
	StatusCannotExec = 126
)

// LookPath finds the program name like a shell does: a name with a slash is
// used as is, any other is searched in the directories of $PATH. The path
// returned is absolute, so Options.Dir does not change which program runs.
//
// Unlike exec.LookPath it accepts a program found through a relative entry
// of $PATH (such as "."), as shells do.
//
// The error is a *task.ExitError with the status a shell gives and a message
// for the user: StatusNotFound with "name: command not found" (or "name: no
// such file or directory" for a name with a slash), or StatusCannotExec
// with, for example, "name: permission denied".
func LookPath(name string) (string, error) {
	path, err := exec.LookPath(name)
	if errors.Is(err, exec.ErrDot) {
		err = nil
	}
	if err != nil {
		return "", lookError(name, err)
	}
	if !filepath.IsAbs(path) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", &task.ExitError{Code: StatusNotFound, Err: fmt.Errorf("%s: %w", name, err)}
		}
		path = abs
	}
	return path, nil
}

// LookPathIn is LookPath for a shell whose PATH is path and whose current
// directory is dir: a name with a slash is taken relative to dir, and an
// empty entry of path is dir too.
func LookPathIn(name, path, dir string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if _, err := exec.LookPath(p); err != nil {
			return "", lookError(name, err)
		}
		return p, nil
	}
	for _, d := range filepath.SplitList(path) {
		switch {
		case d == "":
			d = dir
		case !filepath.IsAbs(d):
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, name)
		if _, err := exec.LookPath(p); err == nil {
			return p, nil
		}
	}
	return "", lookError(name, exec.ErrNotFound)
}

func lookError(name string, err error) error {
	if errors.Is(err, exec.ErrNotFound) {
		return &task.ExitError{Code: StatusNotFound, Err: fmt.Errorf("%s: command not found", name)}
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		err = ee.Err
	}
	return commandError(name, err)
}

// commandError is the status and message of a program that could not be
// run: not found is 127, anything else 126, as in a shell. err is shown
// without its "stat" or "fork/exec" wrapping, which would only repeat the
// name.
func commandError(name string, err error) *task.ExitError {
	code := StatusCannotExec
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Op != "chdir" {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrNotExist) && (pe == nil || pe.Op != "chdir") {
		code = StatusNotFound
	}
	return &task.ExitError{Code: code, Err: fmt.Errorf("%s: %w", name, err)}
}

// Options describe one external command.
type Options struct {
	// Args is the argument list; Args[0] is the name as typed, which
	// messages use.
	Args []string
	// Path is the program to run, as LookPath returns it. If empty, the
	// process start looks Args[0] up with LookPath.
	Path string
	// Dir is the working directory; empty means that of this process.
	Dir string
	// Env is the environment; nil means os.Environ().
	Env []string
	// Stderr receives the process's standard error; nil discards it. An
	// *os.File is given to the process as is; any other writer is fed from a
	// pipe by a goroutine of the Cmd, and the output task returns only once
	// that pipe is drained, that is once every process holding it (a
	// background child too) has closed it.
	Stderr io.Writer
	// Stdin, if set, is the process's standard input (os.Stdin, a file
	// opened for '<'), and the command has no input task.
	Stdin *os.File
	// Stdout, if set, is the process's standard output (os.Stdout, a file
	// opened for '>'), and the output task has no output port.
	Stdout *os.File
	// ExtraFiles are given to the process as file descriptors 3, 4, ...
	// (how a named edge becomes /dev/fd/N). Unlike the files above, the
	// Cmd closes them once the process has them, or has failed to start,
	// so that the process holds the only copy of each.
	ExtraFiles []*os.File
}
