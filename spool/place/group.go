package place

import "sync"

// This file is the first step of a group commit (as databases commit many
// transactions with one log write): tokens finished by many jobs are
// synced together, then renamed one by one (CommitNoDirSync), then each
// place's directory is synced once (SyncDir). A token is durable under
// its name only after the last step, which is what a caller that removes
// inputs after their outputs must wait for.

// syncers is how many fsyncs SyncAll keeps in flight: the file system
// joins the syncs that wait together into one journal commit, where one
// after another would each wait for a commit of their own.
const syncers = 8

// SyncAll makes the written data of the tokens ts durable, all together:
// their commits then do not sync them again. It does nothing for tokens
// of a worker that does not sync (Options.NoSync). It returns the first
// error; the tokens stay uncommitted either way, and belong to the
// caller, who commits or aborts them. SyncAll must not run at the same
// time as a Write to one of ts.
//
// It does not call syncfs(2), which syncs the whole file system at
// once: on the shared ext4 disk it synced batches of 8, 64 and 256 tokens
// 3.4, 2 and 1.1 times as fast as these fsyncs (BenchmarkGroupCommit),
// yet the engine with it was no faster end to end (jobs/s, medians of 6
// interleaved runs), and
// its cost is that of every dirty page of the file system, other
// programs' too: a large copy to the same disk would stall every batch.
func SyncAll(ts []*Pending) error {
	var todo []*Pending
	for _, t := range ts {
		if !t.done && !t.synced && !t.p.w.o.NoSync {
			todo = append(todo, t)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	// Start the writeback of every file first: their blocks are then
	// allocated in one transaction of the journal, which the first fsync
	// commits and the others find committed.
	for _, t := range todo {
		startWriteback(t.f, 0, 0)
	}
	errs := make([]error, len(todo))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(syncers, len(todo)) {
		wg.Go(func() {
			for i := range next {
				if errs[i] = todo[i].f.Sync(); errs[i] == nil {
					todo[i].synced = true
				}
			}
		})
	}
	for i := range todo {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
