package buffer

import "sync"

// The memory of buffers outlives their pool: when a pool closes with all
// its buffers back in FREE, their bytes go to a process-wide store, and
// the next pool of the same record size takes them from there before it
// allocates. A process that runs many short pipelines one after another
// or side by side (tpipe pmjq runs one per job, hundreds a second) then
// allocates its buffers once instead of once per run: with the default
// record size of 256 KiB, two fresh buffers per 4 KiB job were most of
// the garbage, and of the time, of such a job.
//
// Only a closed pool gives its buffers away, after every task of its run
// has ended (Pool.Close), and only when all of them are in FREE: no task
// holds a record in one, so nothing can read or write its bytes again.
// The store is a sync.Pool per record size, which the garbage collector
// empties when the buffers go unused.

// mem is the memory of one buffer: its bytes and its index of record ends.
type mem struct {
	data []byte
	ends []int32
}

// stores maps a record size to the *sync.Pool of its buffers' mem.
var stores sync.Map

func storeOf(size int) *sync.Pool {
	if s, ok := stores.Load(size); ok {
		return s.(*sync.Pool)
	}
	s, _ := stores.LoadOrStore(size, &sync.Pool{})
	return s.(*sync.Pool)
}

// newBuf returns buffer id of p's size, with memory from the store if it
// has some, else fresh.
func (p *Pool) newBuf(id int) *Buf {
	if m, ok := storeOf(p.size).Get().(*mem); ok && cap(m.ends) >= p.nrec {
		return &Buf{data: m.data[:0], ends: m.ends[:0], id: id}
	}
	return &Buf{data: make([]byte, 0, p.size), ends: make([]int32, 0, p.nrec), id: id}
}

// recycleLocked gives the memory of p's buffers to the store, if every
// one of them is in FREE; the buffers keep their place in p's counts but
// no memory. It is called once, by Close.
func (p *Pool) recycleLocked() {
	if p.recycled || len(p.free) != len(p.bufs) || len(p.bufs) == 0 {
		return
	}
	p.recycled = true
	s := storeOf(p.size)
	for _, b := range p.bufs {
		s.Put(&mem{data: b.data[:0], ends: b.ends[:0]})
		b.data, b.ends = nil, nil
	}
}
