package place

import (
	"errors"
	"sync"
)

// This file is the first step of a group commit (as databases commit many
// transactions with one log write): tokens finished by many jobs are
// synced together, then renamed one by one (CommitNoDirSync), then each
// place's directory is synced once (SyncDir). A token is durable under
// its name only after the last step, which is what a caller that removes
// inputs after their outputs must wait for.

// syncFSAt is the number of tokens from which SyncAll syncs their whole
// file system at once (syncfs(2)) before their fsyncs. On the shared ext4
// disk (BenchmarkGroupCommit, 4 KiB tokens) fsyncs in flight together
// took 0.7 to 1.6 ms a token on batches of 64 and 256, syncfs 0.2 to 0.4
// ms: fsyncs of many files wait for several journal commits, syncfs for
// one. Its cost is that of every dirty page of the file system, which
// other programs' writes can make large, so a small batch uses fsyncs.
const syncFSAt = 4

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
	if len(todo) >= syncFSAt {
		// One syncfs(2) writes them all and commits the journal once; the
		// fsyncs below then find their files clean and committed, and are
		// there for their errors: a file's fsync reports a failed
		// writeback of that file, which syncfs did not before Linux 5.8.
		if err := syncFS(todo[0].f); err != nil {
			return err
		}
	} else {
		// Start the writeback of every file first: their blocks are then
		// allocated in one transaction of the journal, which the first
		// fsync commits and the others find committed.
		for _, t := range todo {
			startWriteback(t.f, 0, 0)
		}
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
	return errors.Join(errs...)
}
