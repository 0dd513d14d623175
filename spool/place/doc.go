// Package place keeps a place of a Petri net on disk, as pmjq does ("How
// to scale a one liner pipeline"): a directory whose files are tokens. It
// owns the protocol by which any number of workers, in one process, in
// several, or on several hosts sharing the directory over NFS or sshfs,
// take tokens, write new ones and recover from one another's crashes. It
// is the one claim protocol of the spool (tpipe --spool), pmjq and serve.
//
// # Layout
//
// A place is a directory, created 0700, its tokens 0600. A place whose
// directory is set-group-ID is shared with its group (pmjq's permission
// model: the writers of a stage's input are in the stage's group): the
// tokens written there are 0640, and the system gives them the
// directory's group, so the reading stage can read them. Everything in a
// place whose name starts with a dot belongs to the protocol; the rest
// are tokens:
//
//	PLACE/NAME                          a ready token (a regular file, 0600)
//	PLACE/.tmp/OWNER~N                  a token being written (Pending)
//	PLACE/.claim/OWNER/NAME             a token OWNER has claimed (Claim)
//	PLACE/.claim/OWNER/.locks/NAME      OWNER's marker of its lock on NAME
//	PLACE/.lock/NAME                    the lock on NAME: a hard link to its
//	                                    owner's marker, which holds OWNER
//	PLACE/.claim/TAKER~OWNER/           a dead OWNER's claims, being given
//	                                    back by TAKER (see Reap)
//	PLACE/.bad/NAME                     a token moved aside (Aside)
//
// OWNER is a Worker's identity, Owner.String: host, boot, pid and the
// process's start time, so that a pid the kernel has reused is not taken
// for the worker that held it.
//
// The protocol's entries are made when first needed (a place that is only
// written gets .tmp alone) and removed when the worker that used them
// closes the place, each only if it is empty: what another live worker
// holds stays, and a worker that finds an entry gone makes it again. A
// killed worker's entries stay until a worker takes its claims back and
// later closes the place.
//
// # The protocol
//
// Every step is one rename, link, mkdir or unlink, which are atomic on a
// local file system and on NFS (flock is not dependable there, which is
// why none is used):
//
//   - Write: Create makes PLACE/.tmp/OWNER~N (O_EXCL, 0600), the caller
//     writes it, Commit syncs the file, renames it to PLACE/NAME and syncs
//     the directory. A reader never sees half a token; a crash leaves a
//     file in .tmp, which Reap removes once its owner is dead. A writer
//     of many tokens commits them as a group: SyncAll syncs their files
//     together, CommitNoDirSync renames each, SyncDir syncs each
//     directory once; only then are they durable.
//   - Claim: rename PLACE/NAME to PLACE/.claim/OWNER/NAME. Of two workers
//     that try, one wins and the other gets ErrClaimed, a lost race and not
//     a failure. Done removes the claimed token, Release puts it back.
//   - Deliver: Claim.Complete runs the caller's commit of its outputs and
//     removes the input, in the order a Delivery says: output first
//     (at-least-once: a crash between the two redoes the work, and an
//     output named after its input is overwritten, not duplicated), or
//     input first (at-most-once: a crash loses the work instead).
//   - Move: Claim.MoveTo renames a claimed token into another place, as a
//     ready token there (a job that keeps failing goes to a place of
//     failures, where a person looks at it).
//   - Lock: for work whose inputs stay (a cache keeps its tokens) a worker
//     takes a lock on a name instead: it writes a marker in its claim
//     directory and hard-links it to PLACE/.lock/NAME; link fails when the
//     name is taken, so one worker wins. The spool holds its whole
//     directory for a run this way (lock "run" of DIR).
//   - Lease: a Worker renews its lease by setting the modification time of
//     its claim directory in every place it has one, every Lease/4 (one
//     write per place, not per claim).
//   - Take back: an owner is dead when it ran on this host and its pid is
//     gone or now belongs to another process (another start time, another
//     boot), or, on another host, when its claim directory has not been
//     renewed for a Lease. Reap renames a dead owner's claim directory to
//     .claim/TAKER~OWNER (one rename, so of two takers only one acts),
//     renames its tokens back to ready, removes its locks (each only if
//     .lock/NAME is still the same file as its marker, so a lock taken
//     since by someone else is left alone), and removes the directory. A
//     taker that dies in the middle is itself dead, and its .claim/TAKER~
//     directory is taken back the same way.
//
// Clocks of hosts that share a place must agree to well within a Lease.
//
// Inspect lists who holds what in a place, alive or not, and how many
// tokens are being written into it: together they tell whether work is
// still in flight (a worker that stops when a net is quiet, tpipe status).
//
// # Names and links
//
// Every name a caller gives is checked by ValidName: no '/', no "..", no
// NUL or other control character, no leading '-' or '.', at most 255
// bytes of UTF-8. No symbolic link inside a place is followed: places are
// checked with Lstat, tokens are opened with O_NOFOLLOW, and Tokens lists
// regular files only.
//
// # Watching
//
// Watch says when to look at a directory again: on inotify events where
// the file system sends them (github.com/fsnotify/fsnotify), by polling
// with back-off where it does not (NFS, FUSE), and after a periodic
// rescan in every case, since an event can be missed. A long-running
// worker calls Reap on each rescan, so that what a dead worker held comes
// back without a new event.
//
// # Concurrency
//
// A Worker and its Places are safe for concurrent use by several
// goroutines. A Claim, Lock or Pending belongs to the goroutine that got
// it.
package place
