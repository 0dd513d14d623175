// Package jobs is tpipe's one job engine: the transitions of a Petri net
// whose places are directories and whose tokens are files, as in pmjq
// ("How to scale a one liner pipeline"). Every file is a whole job. It
// stands on the places alone (package place): what a job runs is a Func
// its front ends give, above it and above the runner (package
// front/stages: tpipe pmjq INDIR 'FILTER' OUTDIR's Script, the and-merge
// tpipe pmjq --inputs PATTERN DIR... --cmd CMD's Argv, with PatternKey
// from here, and tpipe serve's Net; package front/pmjq1: pmjq 1.0's
// command line). Any number
// of processes, on one host or on several that share the directories, run
// the same stages on the same places and share the work; package place
// gives them the one claim protocol that makes a job run once at a time
// and survive a worker's crash.
//
// # Places
//
// The engine sees places through the interfaces of places.go (Places,
// Place, Token, Pending), never a folder: Folders, on package place, is
// the backend of folders shared by workers (the default), and a backend
// of another kind gives the same listing, take, group commit and
// take-back (places_test.go runs the engine on places in memory).
//
// # A job's life
//
// A Stage has input places, output ports (each one place, or several that
// get the same bytes: a branch) and a Func. A job is one token of each
// input place with the same key (the token's name unless the stage says
// otherwise): one input is pmjq's daemon, several are its and-merge. Two
// stages writing one place are its xor-merge. A worker:
//
//  1. takes the job's tokens, all or none, in the order of the places
//     (so two workers after one job meet at its first place): it claims
//     them (moves them into its claim folder), or, for a stage whose
//     command names its inputs by their paths (pmjq 1.0's), locks them
//     where they are;
//  2. creates one pending token per output port, named after the key;
//  3. runs the Func, which reads the claimed tokens and writes the pending
//     ones, and returns an exit status;
//  4. on status 0 hands the job to the committer and takes the next one;
//     the committer delivers the jobs handed to it while it was busy, all
//     together (a group commit): it syncs their outputs, renames them,
//     syncs each output directory once, then removes their inputs
//     (place.AtLeastOnce: a crash in between redoes the job, and its
//     outputs, named after the job, are overwritten, never doubled), or
//     removes the inputs first (place.AtMostOnce); see commit.go;
//  5. otherwise aborts the outputs and runs the job again, under the
//     same claim, up to the stage's Retries; then the job has failed for
//     good.
//
// # Failed jobs
//
// One convention for all of tpipe's own forms: a job that failed for good
// goes to the failed places, by default each input place's directory with
// ".failed" added, its first token with NAME.stderr (what it wrote on
// stderr in its last try) and NAME.status (status, tries, stage, owner,
// time) beside it (see Failure and Failures). It never reaches an output
// and is never lost; to run it again, move its tokens back. pmjq 1.0's
// command line keeps pmjq 1.0's own convention, as its scripts expect:
// the tokens go to the names of its --error templates with nothing beside
// them (Stage.FailedName; the command's stderr is in its --stderr log),
// or, without --error, stay where they are (Stage.KeepFailed).
//
// While a job runs its owner renews its lease (place.Worker). The
// dispatcher takes back, at every scan, the claims of owners that died:
// at once for a process of this host that is gone, after the lease for one
// of another host that stopped renewing.
//
// # Dispatching
//
// One goroutine per Run scans the input places, the last stage first (so
// that a job already in the net moves on before new ones start, as Record
// Oriented Scheduling does in "Thrifty Execution of Task Pipelines"), and
// hands the jobs it finds, a batch at a time, to Options.Workers worker
// goroutines; within a stage a batch starts at a random job, so that the
// workers of several processes do not all race for the same one. It scans again when a watch (inotify, or polling where the
// file system sends no events) says an input place changed, when a job
// ends, and every Options.Recheck in any case. Matching the tokens of
// several places builds no cartesian product: one pass over each place's
// listing files every token under its key, and a key gives as many jobs
// as its scarcest place has tokens (see match).
//
// # Stopping
//
// Run returns when its context is done: jobs running are cancelled and
// their tokens go back to their places; jobs that had run to the end are
// delivered first. With Options.Once it returns when
// the net is quiet: no complete job ready, no token claimed or being
// written by any owner, here or elsewhere. Failed jobs do not keep it
// running; an and-merge token whose partners never come stays where it
// is.
//
// # Concurrency
//
// Run may be called from several goroutines, on separate places; a Func
// is called from several goroutines at once. An Observer's methods are
// called from the workers, the committer and the dispatcher and must not
// block.
package jobs
