// Package spool is the layout on disk of a persistent run (tpipe
// --spool DIR): every edge of the graph a place (package spool/place),
// every segment of its records a token, and a record of the graph that
// made the directory. It names tokens by causal hash, reads and writes
// them in the one record-file format (package record/recfile), and
// collects what no current graph refers to (GC). The policy that runs a
// graph on it is sched's spool policy.
//
// # Layout
//
//	DIR/graph               the Record: the graph's shape, its tasks,
//	                        its places, the tokens of its last complete run
//	DIR/.lock/run           the run lock: one run or gc at a time
//	DIR/PLACE/              one place per edge, named after it (F1, @a)
//	DIR/PLACE/SEG.HASH      a segment: SEG its position (8 digits), HASH
//	                        its causal hash
//	DIR/PLACE/end.GEN       the place is complete: the names of its
//	                        segments, in order; GEN is the causal hash of
//	                        the whole edge
//	DIR/PLACE/err.GEN       what the tasks of the step that writes the
//	                        place (its first output's, for a step with
//	                        several) wrote to their standard error, kept
//	                        to be written again on a rerun that finds the
//	                        step cached; committed before the step's end
//	                        tokens
//
// plus each place's own .tmp, .claim, .lock and .bad (see package
// spool/place).
//
// # Causal hashes
//
// As in Koji ("Koji: Automating pipelines with mixed-semantics data
// sources"), a token's name is a hash of how it was made, computable
// before it is: the identity of the stage that makes it (its command
// words, the files it reads with their size and modification time) and
// the hashes of its inputs. A rerun finds finished work by name and does
// not redo it; a changed stage changes its hashes and those of every
// token after it, and nothing before it. Bytes whose making cannot be
// named (standard input, a task without an identity) are named by a hash
// of their content instead.
package spool

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// HashLen is the length of a hash in a name: 32 hex digits, 128 bits.
const HashLen = 32

// Hash returns the hash of parts, each taken whole (no two lists of parts
// give the same input to SHA-256).
func Hash(parts ...string) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))[:HashLen]
}

// SegName names segment k of a place, of causal hash hash.
func SegName(k int, hash string) string { return fmt.Sprintf("%08d.%s", k, hash) }

// EndName names the token that completes a place of causal hash gen.
func EndName(gen string) string { return "end." + gen }

// StderrName names the token that keeps the standard error of the step
// that makes a place of causal hash gen (see WriteStderr).
func StderrName(gen string) string { return "err." + gen }

// ParseSeg returns the position of a segment's name; ok is false for a
// name that is not a segment's.
func ParseSeg(name string) (k int, ok bool) {
	seg, hash, found := strings.Cut(name, ".")
	if !found || len(seg) != 8 || len(hash) != HashLen ||
		strings.Trim(seg, "0123456789") != "" || strings.Trim(hash, "0123456789abcdef") != "" {
		return 0, false
	}
	k, err := strconv.Atoi(seg)
	return k, err == nil
}

// PlaceNames names the places of edges named names: the edge's name when
// it is a valid file name, unique, else "edge" and its number; a name
// seen before gets "#2", "#3" (the several edges of an @name read by
// several commands).
func PlaceNames(names []string) []string {
	out := make([]string, len(names))
	seen := map[string]int{}
	for k, n := range names {
		if validPlace(n) != nil {
			n = fmt.Sprintf("edge%d", k+1)
		}
		seen[n]++
		if c := seen[n]; c > 1 {
			n = fmt.Sprintf("%s#%d", n, c)
		}
		out[k] = n
	}
	return out
}
