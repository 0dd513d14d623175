package ext

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// On Linux a child gets SIGKILL when tpipe dies (prctl PR_SET_PDEATHSIG),
// so that it does not outlive a tpipe that was itself killed with SIGKILL,
// the one way out that runs no code of ours. Only the process ext started
// gets it: what that process started in turn is reached by the process
// group kill, which needs tpipe alive to send it.
//
// The kernel sends the parent-death signal when the thread that forked the
// child ends, not the process. The Go runtime ends a thread only when a
// goroutine locked to it returns without unlocking, which any code (ours or
// a library's) may do on any thread that happens to run it. So every child
// is forked from one goroutine locked to its thread, the launcher, which no
// other goroutine can run on and which stays locked while a child it
// started is unreaped. When the last of them is reaped it unlocks (the
// thread goes back to the runtime's pool, alive) and returns; the next
// start makes a new launcher.
var launch struct {
	mu    sync.Mutex
	users int // live processes, plus starts in progress
	reqs  chan *exec.Cmd
	errs  chan error
	done  chan struct{}
}

// start starts cmd from the launcher's thread.
func start(cmd *exec.Cmd) error {
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	launch.mu.Lock()
	if launch.users == 0 {
		launch.reqs, launch.errs, launch.done = make(chan *exec.Cmd), make(chan error), make(chan struct{})
		go launcher(launch.reqs, launch.errs, launch.done)
	}
	launch.users++
	reqs, errs := launch.reqs, launch.errs
	launch.mu.Unlock()

	// One start at a time goes through the launcher: the exchange over
	// reqs and errs is made while holding no lock, so concurrent starts
	// queue on the channel.
	reqs <- cmd
	err := <-errs
	if err != nil {
		release()
	}
	return err
}

// release releases one use of the launcher: a start that failed, or a
// process reaped. The last use stops it and waits for it to return.
func release() {
	launch.mu.Lock()
	defer launch.mu.Unlock()
	launch.users--
	if launch.users == 0 {
		close(launch.reqs)
		<-launch.done
	}
}

// launcher starts the commands sent on reqs, answering each on errs, from
// one locked thread, until reqs is closed.
func launcher(reqs <-chan *exec.Cmd, errs chan<- error, done chan<- struct{}) {
	defer close(done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for cmd := range reqs {
		errs <- cmd.Start()
	}
}
