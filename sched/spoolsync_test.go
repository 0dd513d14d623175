package sched

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tpipe/tpipe/spool"
	"github.com/tpipe/tpipe/spool/place"
)

// A finished token is read before the syncer commits it, through its
// file; after the syncer's close it is in its place under its name, its
// early file closed, and the edge has nothing pending.
func TestSpoolSyncerEarlyRead(t *testing.T) {
	for _, noSync := range []bool{true, false} {
		w, err := place.NewWorker(place.Options{Heartbeat: -1, NoSync: noSync})
		if err != nil {
			t.Fatal(err)
		}
		p, err := w.Open(filepath.Join(t.TempDir(), "F1"))
		if err != nil {
			t.Fatal(err)
		}
		e := newSpoolEdge(0, p)
		var failed []error
		y := newSpoolSyncer(2, func(err error) { failed = append(failed, err) })
		// Both of the syncer's goroutines wait for the test, with four
		// tokens queued behind them: those are read while still in .tmp.
		block := make(chan struct{})
		y.jobs <- func() { <-block }
		y.jobs <- func() { <-block }
		const n = 6
		for k := range n {
			if k == 4 {
				f := e.takeEarly(0)
				if f == nil {
					t.Fatal("segment 0 is durable while the syncer is held")
				}
				var got string
				if _, err := spool.ReadWritten(f, 1<<20, func(rec []byte) error { got = string(rec); return nil }); err != nil || got != "record 0\n" {
					t.Errorf("early read: %q, %v", got, err)
				}
				f.Close()
				close(block)
			}
			name := spool.SegName(k, spool.Hash("t", fmt.Sprint(k)))
			tw, err := spool.NewTokenWriter(p, name, spool.DefaultCodec)
			if err != nil {
				t.Fatal(err)
			}
			tw.Add(fmt.Appendf(nil, "record %d\n", k))
			if _, err := tw.Finish(k); err != nil {
				t.Fatal(err)
			}
			f, err := tw.OpenWritten()
			if err != nil {
				t.Fatal(err)
			}
			e.publish(k, name, f)
			if err := y.commit(context.Background(), e, k, tw, func(err error) error { return err }); err != nil {
				t.Fatal(err)
			}
		}
		if err := y.close(); err != nil || len(failed) > 0 {
			t.Fatalf("close: %v, %v", err, failed)
		}
		e.pending.Wait()
		for k := range n {
			if e.takeEarly(k) != nil {
				t.Errorf("segment %d: an early file left once durable", k)
			}
			var got string
			if _, err := spool.ReadToken(p, e.name(k), 1<<20, func(rec []byte) error { got = string(rec); return nil }); err != nil || got != fmt.Sprintf("record %d\n", k) {
				t.Errorf("segment %d in its place: %q, %v", k, got, err)
			}
		}
		w.Close()
	}
}

// A token the syncer cannot commit fails the run with its error, marks
// its edge lost (no end token is then written) and leaves nothing in
// .tmp.
func TestSpoolSyncerFailure(t *testing.T) {
	w, err := place.NewWorker(place.Options{Heartbeat: -1, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p, err := w.Open(filepath.Join(t.TempDir(), "F1"))
	if err != nil {
		t.Fatal(err)
	}
	e := newSpoolEdge(0, p)
	var failed []error
	y := newSpoolSyncer(1, func(err error) { failed = append(failed, err) })
	tw, _ := spool.NewTokenWriter(p, spool.SegName(0, spool.Hash("x")), spool.DefaultCodec)
	tw.Add([]byte("x\n"))
	tw.Finish(0)
	tw.Abort() // the file is gone: the commit cannot rename it
	boom := errors.New("boom")
	y.commit(context.Background(), e, 0, tw, func(err error) error {
		if err == nil {
			t.Error("a commit of a dropped token succeeded")
		}
		return boom
	})
	if err := y.close(); err != nil || len(failed) != 1 || failed[0] != boom {
		t.Fatalf("close %v, failures %v", err, failed)
	}
	r := &spoolRun{}
	if err := r.writeEnd(context.Background(), e, nil, "gen", []string{spool.SegName(0, spool.Hash("x"))}, 0); err != nil {
		t.Fatal(err)
	}
	if has, _ := p.Has(spool.EndName("gen")); has {
		t.Error("an end token was written for a lost segment")
	}
}
