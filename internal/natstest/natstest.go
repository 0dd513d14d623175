// Package natstest starts real nats-server processes for tests: on
// 127.0.0.1, a free port, a store of the test's own, JetStream on. A
// server can be killed with SIGKILL and started again on its store, as
// the crash tests do.
//
// The server is $TPIPE_NATS_SERVER if set (say, Debian's
// /usr/bin/nats-server), else the one the module pins as a tool
// (go.mod's tool line), built once into the build cache with go build.
package natstest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary returns the path of the nats-server to run.
func Binary(t testing.TB) string {
	if p := os.Getenv("TPIPE_NATS_SERVER"); p != "" {
		return p
	}
	buildOnce.Do(func() {
		// One binary for every test process of a run, and runs after it:
		// built to a name of its own, then renamed into place.
		binPath = filepath.Join(os.TempDir(), "tpipe-natstest-nats-server")
		tmp := fmt.Sprintf("%s.%d", binPath, os.Getpid())
		out, err := exec.Command("go", "build", "-o", tmp, "github.com/nats-io/nats-server/v2").CombinedOutput()
		if err == nil {
			err = os.Rename(tmp, binPath)
		}
		if err != nil {
			os.Remove(tmp)
			buildErr = fmt.Errorf("go build nats-server: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// Server is a nats-server process.
type Server struct {
	t     testing.TB
	Port  int
	Store string
	Args  []string // extra arguments (say, a config file)
	cmd   *exec.Cmd
	exit  chan struct{}
}

// Start starts a server with JetStream; it is killed when the test ends.
func Start(t testing.TB, args ...string) *Server {
	s := &Server{t: t, Port: freePort(t), Store: t.TempDir(), Args: args}
	s.start()
	t.Cleanup(func() { s.Kill() })
	return s
}

// StartNoJetStream starts a server without JetStream.
func StartNoJetStream(t testing.TB) *Server {
	s := &Server{t: t, Port: freePort(t)}
	s.start()
	t.Cleanup(func() { s.Kill() })
	return s
}

// URL is nats://127.0.0.1:PORT.
func (s *Server) URL() string { return "nats://127.0.0.1:" + strconv.Itoa(s.Port) }

func (s *Server) start() {
	args := []string{"-a", "127.0.0.1", "-p", strconv.Itoa(s.Port)}
	if s.Store != "" {
		args = append(args, "-js", "-sd", s.Store)
	}
	s.cmd = exec.Command(Binary(s.t), append(args, s.Args...)...)
	dieWithParent(s.cmd) // a test that times out leaves no server behind
	log, err := os.Create(filepath.Join(s.t.TempDir(), "nats-server.log"))
	if err != nil {
		s.t.Fatal(err)
	}
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start nats-server: %v", err)
	}
	s.exit = make(chan struct{})
	go func() { s.cmd.Wait(); log.Close(); close(s.exit) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-s.exit:
			b, _ := os.ReadFile(log.Name())
			s.t.Fatalf("nats-server exited at start:\n%s", b)
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("nats-server did not listen on %d in 20s", s.Port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill kills the server with SIGKILL and waits for it to be gone.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exit
}

// Restart kills the server with SIGKILL and starts it again on the same
// port and store.
func (s *Server) Restart() {
	s.Kill()
	s.start()
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
