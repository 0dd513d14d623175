// Package merge runs and-merge transitions on places on disk, as pmjq
// does ("How to scale a one liner pipeline", section 5.3): a transition
// with several input folders fires when every folder holds a file whose
// name gives the same key, and it consumes one file of each.
//
// It serves two command lines with one code path: tpipe's
// `pmjq --inputs PATTERN DIR... --cmd CMD` (the key is the pattern's
// group) and pmjq 1.0's `--input=DIR/REGEX... --invariant=TEMPLATE`
// (package pmjq1; the key is the expanded invariant).
//
// # Matching
//
// Match is a pure function from the folders' listings to the complete
// sets: every name is keyed once and filed in an index by key, and a key
// gives as many sets as its scarcest input has names, the i-th name of
// each input (in sorted order) going to the i-th set. The cost is linear
// in the number of files; pmjq 1.0 built the cartesian product of the
// folders, which ran out of memory on 10,000 files in each of two.
//
// # Taking a set
//
// A set is taken all or nothing through package place: each file is
// claimed (moved into the worker's claim directory, TakeClaim) or locked
// (left where it is, TakeLock, for pmjq 1.0 commands that name their
// inputs by their paths); if one is lost to another worker the others
// are given back at once. A worker that dies holding a set has its
// claims or locks taken back by the others, after its lease or at once
// when its process is seen gone on the same host.
//
// # Concurrency
//
// An Engine runs Config.Workers jobs at a time on goroutines it owns and
// waits for; Run returns when its context is done (or, with Once, when
// no complete set remains and nobody holds one).
package merge
