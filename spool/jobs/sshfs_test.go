package jobs

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tpipe/tpipe/spool/jobs/jobstest"

	"golang.org/x/sys/unix"
)

// TestSSHFS is the case of several hosts sharing a folder over a network
// file system: one folder of this machine is mounted twice with sshfs
// (SFTP over SSH to 127.0.0.1, a throwaway sshd with its own keys and
// port), and a worker process with a host id of its own runs on each
// mount. On such mounts flock does not exclude one mount from the other,
// which is why the claim protocol renames instead: every job must be done
// exactly once, by one of the two.
func TestSSHFS(t *testing.T) {
	shared, mounts := sshfsMounts(t, 2, false)
	m1, m2 := mounts[0], mounts[1]
	root := filepath.Dir(shared)
	ctx := jobstest.Ctx(t)
	logFlockAcrossMounts(t, m1, m2)

	in, out, logf := filepath.Join(shared, "in"), filepath.Join(shared, "out"), filepath.Join(root, "log")
	jobs, want := jobSet(120)
	jobstest.Drop(t, in, jobs)
	if err := os.WriteFile(logf, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Both workers start before either takes a job (the gate): a worker
	// alone would do all 120 before the other had started.
	var ps []*proc
	gate := filepath.Join(root, "gate")
	for i, m := range []string{m1, m2} {
		p := startHelper(t, "work", "JOBS_IN="+filepath.Join(m, "in"), "JOBS_OUT="+filepath.Join(m, "out"),
			"JOBS_LOG="+logf, "JOBS_PAUSE=5ms", "JOBS_LEASE=30s", fmt.Sprintf("JOBS_HOST=mount%d", i+1), "JOBS_GATE="+gate)
		p.expect(t, ctx, "started")
		ps = append(ps, p)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if err := p.wait(ctx); err != nil {
			t.Fatalf("a worker: %v", err)
		}
	}
	if got := jobstest.Files(t, out); !mapsEqual(got, want) {
		t.Errorf("outputs: %d of %d, or wrong", len(got), len(want))
	}
	if left := jobstest.Files(t, in); len(left) != 0 {
		t.Errorf("in not drained: %d left", len(left))
	}
	if s := jobstest.Stray(t, shared); len(s) != 0 {
		t.Errorf("stray files: %v", s)
	}
	b, _ := os.ReadFile(logf)
	times, by := map[string]int{}, map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		pid, name, _ := strings.Cut(l, " ")
		times[name]++
		by[pid]++
	}
	for name := range jobs {
		if times[name] != 1 {
			t.Errorf("job %s done %d times, want once", name, times[name])
		}
	}
	t.Logf("jobs per worker: %v", by)
	if len(by) != 2 {
		t.Errorf("jobs were done by %d workers, want both: %v", len(by), by)
	}
}

// TestSSHFSSlowWriters: a worker watches an input folder through an
// sshfs mount, which gives no events and answers stat from caches; real
// writers take their time, one on the server's side of the folder and
// one through the mount. Each job is taken only once its writer is done
// (its size and modification time settled, looked at past the caches),
// whole.
func TestSSHFSSlowWriters(t *testing.T) {
	shared, mounts := sshfsMounts(t, 1, true) // sshfs's defaults, caches and all
	m := mounts[0]
	for _, d := range []string{filepath.Join(shared, "in"), filepath.Join(shared, "out")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(jobstest.Ctx(t))
	defer cancel()
	st := Stage{Name: "wc", In: []string{filepath.Join(m, "in")}, Out: [][]string{{filepath.Join(m, "out")}}, Run: script("wc -l")}
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, []Stage{st}, Options{NoSync: true, Workers: 2, Recheck: 100 * time.Millisecond, Stderr: os.Stderr})
		done <- err
	}()
	writers := map[string]string{
		"server.txt": `for i in $(seq 14); do echo line $i; sleep .3; done > ` + filepath.Join(shared, "in", "server.txt"),
		"mount.txt":  `for i in $(seq 14); do /bin/echo line $i; sleep .3; done > ` + filepath.Join(m, "in", "mount.txt"),
		// Pauses of 1.5s, under the 2s a file must keep its stamp there.
		"pauses.txt": `{ for i in $(seq 4); do echo line $i; sleep 1.5; done; for i in $(seq 10); do echo line; done; } > ` + filepath.Join(shared, "in", "pauses.txt"),
	}
	var cmds []*exec.Cmd
	for _, w := range writers {
		c := exec.Command("sh", "-c", w)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
	for name := range writers {
		path := filepath.Join(shared, "out", name)
		for {
			if b, err := os.ReadFile(path); err == nil {
				if string(b) != "14\n" {
					t.Errorf("out/%s = %q, want the 14 lines counted: taken before its writer was done", name, b)
				}
				break
			}
			if !sleep(ctx, 50*time.Millisecond) {
				t.Fatalf("no out/%s", name)
			}
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// sshfsMounts mounts a folder of this machine n times with sshfs over a
// throwaway sshd on 127.0.0.1, or skips the test where that cannot be
// done; it returns the folder and the mounts.
func sshfsMounts(t *testing.T, n int, cache bool) (shared string, mounts []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts sshd and sshfs mounts")
	}
	for _, tool := range []string{"sshfs", "fusermount3", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (.ci/run installs sshfs and openssh-server)", tool)
		}
	}
	sshd := "/usr/sbin/sshd"
	if _, err := os.Stat(sshd); err != nil {
		t.Skipf("%s is not installed (.ci/run installs openssh-server)", sshd)
	}
	if f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0); err != nil {
		t.Skipf("FUSE is unavailable here (%v): no sshfs mount can be made", err)
	} else {
		f.Close()
	}
	ctx := jobstest.Ctx(t)
	root := t.TempDir()
	shared, keys := filepath.Join(root, "shared"), filepath.Join(root, "keys")
	for _, d := range []string{shared, keys} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	port := startSSHD(t, ctx, sshd, keys)
	for i := range n {
		mounts = append(mounts, mountSSHFS(t, ctx, keys, port, shared, filepath.Join(root, fmt.Sprintf("m%d", i+1)), cache))
	}
	return shared, mounts
}

// startSSHD starts a throwaway sshd on a free port of 127.0.0.1 that
// takes the key it makes in dir; it is stopped at the end of the test.
func startSSHD(t *testing.T, ctx context.Context, sshd, dir string) int {
	t.Helper()
	for _, k := range []string{"host", "user"} {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, k)).CombinedOutput()
		if err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
	}
	pub, err := os.ReadFile(filepath.Join(dir, "user.pub"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	// sshd wants its privilege separation folder, as its Debian service
	// makes it.
	if os.Geteuid() == 0 {
		os.MkdirAll("/run/sshd", 0o755)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
PidFile %s
AuthorizedKeysFile %s
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
Subsystem sftp internal-sftp
LogLevel ERROR
`, port, filepath.Join(dir, "host"), filepath.Join(dir, "sshd.pid"), filepath.Join(dir, "authorized_keys"))
	cfgFile := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd := exec.Command(sshd, "-D", "-e", "-f", cfgFile)
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return port
		}
		if cmd.ProcessState != nil || !sleep(ctx, 20*time.Millisecond) {
			t.Fatalf("sshd did not start: %s", errb.String())
		}
	}
}

// mountSSHFS mounts dir of 127.0.0.1 at mnt over SFTP, with sshfs's
// cache of folder listings (and of the attributes they bring, 20s) if
// cache, else none; it is unmounted at the end of the test.
func mountSSHFS(t *testing.T, ctx context.Context, keys string, port int, dir, mnt string, cache bool) string {
	t.Helper()
	if err := os.MkdirAll(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	opts := fmt.Sprintf("port=%d,IdentityFile=%s,StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,BatchMode=yes", port, filepath.Join(keys, "user"))
	if !cache {
		opts += ",dir_cache=no"
	}
	cmd := exec.Command("sshfs", "-f", "-o", opts, u.Username+"@127.0.0.1:"+dir, mnt)
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		exec.Command("fusermount3", "-u", "-z", mnt).Run()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	for !mounted(mnt) {
		select {
		case <-exited:
			msg := errb.String()
			if strings.Contains(msg, "fuse") || strings.Contains(msg, "permitted") {
				t.Skipf("FUSE is unavailable here: sshfs: %s", strings.TrimSpace(msg))
			}
			t.Fatalf("sshfs ended: %s", msg)
		case <-ctx.Done():
			t.Fatalf("sshfs did not mount: %s", errb.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return mnt
}

// mounted reports whether a file system is mounted at dir.
func mounted(dir string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}

// logFlockAcrossMounts says whether an exclusive flock taken through one
// mount keeps one through the other from being taken: on sshfs it does
// not, which is why the protocol never relies on flock.
func logFlockAcrossMounts(t *testing.T, m1, m2 string) {
	name := "flock-probe"
	if err := os.WriteFile(filepath.Join(m1, name), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(filepath.Join(m1, name))
	f1, err1 := os.Open(filepath.Join(m1, name))
	f2, err2 := os.Open(filepath.Join(m2, name))
	if err1 != nil || err2 != nil {
		t.Fatalf("open the probe: %v, %v", err1, err2)
	}
	defer f1.Close()
	defer f2.Close()
	e1 := unix.Flock(int(f1.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	e2 := unix.Flock(int(f2.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	t.Logf("flock LOCK_EX through mount 1: %v; then through mount 2: %v (nil twice: flock does not exclude across mounts)", e1, e2)
}
