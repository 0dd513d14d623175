// Package corpus is the pipeline half of tpipe's benchmark suite: a corpus
// of everyday shell pipelines (log analysis, counting, sorting by keys, an
// awk sum) over inputs it generates itself (a 1M-line access log in the
// common log format, a text of words and its vocabulary), run by tpipe and
// by bash with GNU coreutils, each a whole process, alternating in rounds
// of random order. The report gives each pipeline's median time for both,
// their ratio and whether the outputs were the same, with a plot of the
// ratios. Run it with `go run ./bench -corpus` or `tpipe bench -corpus`;
// bench/README.md says what the report holds.
package corpus
