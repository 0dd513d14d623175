// Package proofs is an explicit-state model checker for the buffer model
// of "Thrifty Execution of Task Pipelines" (Schneider, Conway and Skeen,
// 1984), the model tpipe's runtime (package buffer) implements. Its tests
// check the paper's theorems on the model and tie the model to the
// runtime; README.md says what is checked, up to which sizes, and what was
// found.
//
// A Pipeline is a graph of tasks linked by queues with capacities. Each
// task is a small program of a Kind (COPY, PREFIX, FILTER, DUPLICATE, SUM,
// and TEE, ROUTE, JOIN, MERGE for graphs) that reads records, writes
// records and follows the paper's rules B1-B4 about eof. A Config chooses
// the variant of the model: the write order (the paper's literal
// acquire-then-release, or tpipe's reserve-first), how a task reads (a
// private copy, or in place with filters moving buffers on), eof as a
// record or as a mark, whether FREE hands a released buffer to its first
// waiter, batching, the scheduler (every interleaving, Record Oriented
// Scheduling, or the cooperative variant tpipe first built), and whether
// a deadlock is resolved by growing a queue.
//
// Check explores every reachable state breadth first, storing each once
// under a canonical byte encoding with a pointer to the state it was
// reached from, so that a deadlock comes with a shortest schedule to it:
// a Trace, printed one action a line like the paper's schedule DS.
// BufferProfile finds with one search every B at which a pipeline
// deadlocks. Both are plain deterministic code and start no goroutines.
//
// Neither is safe for concurrent use of one call's values, but separate
// calls share nothing and may run in parallel.
package proofs
