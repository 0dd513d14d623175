package recfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/tpipe/tpipe/record/recfile"
	"pgregory.net/rapid"
)

// backlogMachine checks a Backlog against the obvious model: a slice of
// blocks, appended at the end and taken from the front.
type backlogMachine struct {
	l     *recfile.Backlog
	model [][][]byte
	cont  []bool // the model's Block.Cont of each block
	blk   recfile.Block
}

func (m *backlogMachine) Append(t *rapid.T) {
	recs := rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 0, 300), 0, 20).Draw(t, "records")
	cont := rapid.Bool().Draw(t, "cont")
	m.blk.Cont = cont
	for _, r := range recs {
		if err := m.blk.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.l.Append(&m.blk); err != nil {
		t.Fatal(err)
	}
	if m.blk.Len() != 0 {
		t.Fatal("Append left records in the block")
	}
	if m.blk.Cont {
		t.Fatal("Append left Cont set")
	}
	if len(recs) > 0 { // an empty block writes nothing
		m.model = append(m.model, recs)
		m.cont = append(m.cont, cont)
	}
}

func (m *backlogMachine) Read(t *rapid.T) {
	err := m.l.ReadBlock(&m.blk)
	if len(m.model) == 0 {
		if err != io.EOF {
			t.Fatalf("empty backlog: %v, want io.EOF", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	want, wantCont := m.model[0], m.cont[0]
	m.model, m.cont = m.model[1:], m.cont[1:]
	if m.blk.Cont != wantCont {
		t.Fatalf("Cont %v, want %v", m.blk.Cont, wantCont)
	}
	if m.blk.Len() != len(want) {
		t.Fatalf("%d records, want %d", m.blk.Len(), len(want))
	}
	for i, w := range want {
		if !bytes.Equal(m.blk.Record(i), w) {
			t.Fatalf("record %d: %q, want %q", i, m.blk.Record(i), w)
		}
	}
	m.blk.Reset()
}

func (m *backlogMachine) Check(t *rapid.T) {
	if m.l.Blocks() != len(m.model) {
		t.Fatalf("%d blocks, model has %d", m.l.Blocks(), len(m.model))
	}
}

func TestBacklogModel(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		c := rapid.SampledFrom(codecs).Draw(t, "codec")
		l, err := recfile.NewBacklog(dir, c, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		t.Repeat(rapid.StateMachineActions(&backlogMachine{l: l}))
	})
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("backlogs left %d files", len(left))
	}
}

// A backlog holds at most what is waiting: once drained, its file is
// empty again.
func TestBacklogTruncates(t *testing.T) {
	l, err := recfile.NewBacklog(t.TempDir(), recfile.None, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var b recfile.Block
	for i := range 100 {
		b.Add(fmt.Appendf(nil, "record %d", i))
		if err := l.Append(&b); err != nil {
			t.Fatal(err)
		}
	}
	for l.Blocks() > 0 {
		if err := l.ReadBlock(&b); err != nil {
			t.Fatal(err)
		}
	}
	if l.Disk() < 100*10 {
		t.Errorf("Disk %d after 100 blocks", l.Disk())
	}
	if err := l.ReadBlock(&b); err != io.EOF {
		t.Errorf("drained backlog: %v, want io.EOF", err)
	}
	// Reading back a block bigger than the limit is refused.
	l2, err := recfile.NewBacklog(t.TempDir(), recfile.Zstd, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	b.Add(bytes.Repeat([]byte("y"), 100))
	l2.Append(&b)
	var ce *recfile.CorruptError
	if err := l2.ReadBlock(&b); !errors.As(err, &ce) {
		t.Errorf("oversize block: %v, want a CorruptError", err)
	}
}
