package natsjobs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// serverBinary returns the nats-server to run and its version: bin when
// given, else $TPIPE_NATS_SERVER, else the server go.mod pins as a tool,
// built into dir (progress says so), as internal/natstest does for the
// tests.
func serverBinary(ctx context.Context, bin, dir string, progress io.Writer) (path, version string, err error) {
	path = bin
	if path == "" {
		path = os.Getenv("TPIPE_NATS_SERVER")
	}
	if path == "" {
		fmt.Fprintln(progress, "building nats-server")
		path = filepath.Join(dir, "nats-server")
		out, err := exec.CommandContext(ctx, "go", "build", "-o", path, "github.com/nats-io/nats-server/v2").CombinedOutput()
		if err != nil {
			return "", "", fmt.Errorf("go build of nats-server (run from a checkout, or set TPIPE_NATS_SERVER): %v\n%s", err, out)
		}
	}
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", "", fmt.Errorf("%s --version: %v", path, err)
	}
	return path, strings.TrimSpace(string(out)), nil
}

// A server is a nats-server process with JetStream on, listening on
// 127.0.0.1 with a store of its own. Its owner calls stop, which kills it
// and waits for it.
type server struct {
	port  int
	cmd   *exec.Cmd
	log   bytes.Buffer // what it said, for an error
	exit  chan struct{}
	store string
}

// startServer starts bin on a free port with a fresh store under dir and
// returns once it accepts connections.
func startServer(ctx context.Context, bin, dir string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &server{port: port, exit: make(chan struct{}), store: filepath.Join(dir, "store")}
	if err := os.RemoveAll(s.store); err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-js", "-sd", s.store)
	// The log is small (start and stop lines); a bytes.Buffer is enough.
	s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start nats-server: %v", err)
	}
	go func() { s.cmd.Wait(); close(s.exit) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.hostPort(), time.Second)
		if err == nil {
			c.Close()
			return s, nil
		}
		select {
		case <-s.exit:
			return nil, fmt.Errorf("nats-server exited at start: %s", strings.TrimSpace(s.log.String()))
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("nats-server did not listen on %d in 20s", port)
		}
	}
}

func (s *server) hostPort() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// url is nats://127.0.0.1:PORT.
func (s *server) url() string { return "nats://" + s.hostPort() }

// stop kills the server and waits for it, then removes its store.
func (s *server) stop() {
	s.cmd.Process.Kill()
	<-s.exit
	os.RemoveAll(s.store)
}

// cpu is the CPU time (user and system) the server has used so far, from
// /proc; 0 where there is no /proc.
func (s *server) cpu() time.Duration { return procCPU(s.cmd.Process.Pid) }

// procCPU reads utime and stime of process pid from /proc/PID/stat (the
// 14th and 15th fields, in clock ticks of 1/100 s on Linux).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command's name, in parentheses, may hold spaces: count the
	// fields after its closing parenthesis (the 3rd field on).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
