package place

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSyncAll: tokens synced together commit under their names with
// their bytes, and are not synced twice.
func TestSyncAll(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("nosync=%v", noSync), func(t *testing.T) {
			w := newTestWorker(t, Options{NoSync: noSync})
			p, err := w.Open(filepath.Join(t.TempDir(), "p"))
			if err != nil {
				t.Fatal(err)
			}
			var ts []*Pending
			for i := range 20 {
				tk, err := p.Create("t" + strconv.Itoa(i))
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(tk, "token %d\n", i)
				ts = append(ts, tk)
			}
			if err := SyncAll(ts); err != nil {
				t.Fatal(err)
			}
			for _, tk := range ts {
				if tk.synced == noSync {
					t.Fatalf("%s: synced = %v with NoSync %v", tk.name, tk.synced, noSync)
				}
				if err := tk.CommitNoDirSync(); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.SyncDir(); err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				b, err := os.ReadFile(filepath.Join(p.Dir(), "t"+strconv.Itoa(i)))
				if err != nil || string(b) != fmt.Sprintf("token %d\n", i) {
					t.Fatalf("t%d = %q, %v", i, b, err)
				}
			}
			// A committed token is left alone by a second SyncAll.
			if err := SyncAll(ts); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// BenchmarkGroupCommit commits batches of 4 KiB tokens three ways, each
// followed by the renames and one sync of the directory: an fsync per
// token one after another, SyncAll's fsyncs in flight together, and one
// syncfs(2) of the whole file system. Run it on a disk, not tmpfs
// (TMPDIR=/var/tmp).
func BenchmarkGroupCommit(b *testing.B) {
	data := make([]byte, 4<<10)
	for _, n := range []int{8, 64, 256} {
		for _, how := range []string{"fsync-each", "syncall", "syncfs"} {
			b.Run(fmt.Sprintf("batch=%d/%s", n, how), func(b *testing.B) {
				w := newTestWorker(b, Options{})
				p, err := w.Open(filepath.Join(b.TempDir(), "p"))
				if err != nil {
					b.Fatal(err)
				}
				for i := range b.N {
					ts := make([]*Pending, n)
					for k := range ts {
						if ts[k], err = p.Create(fmt.Sprintf("t%d-%d", i, k)); err != nil {
							b.Fatal(err)
						}
						ts[k].Write(data)
					}
					switch how {
					case "fsync-each":
						for _, t := range ts {
							t.f.Sync()
							t.synced = true
						}
					case "syncall":
						SyncAll(ts)
					case "syncfs":
						unix.Syncfs(int(ts[0].f.Fd()))
						for _, t := range ts {
							t.synced = true
						}
					}
					for _, t := range ts {
						if err := t.CommitNoDirSync(); err != nil {
							b.Fatal(err)
						}
					}
					if err := p.SyncDir(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

func newTestWorker(tb testing.TB, o Options) *Worker {
	tb.Helper()
	o.Heartbeat = -1
	w, err := NewWorker(o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { w.Close() })
	return w
}
