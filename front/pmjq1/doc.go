// Package pmjq1 reads pmjq 1.0's command line and makes it a stage of the
// job engine (package jobs), so that scripts written for the released pmjq
// run unchanged with tpipe installed under the name pmjq:
//
//	pmjq [--quit-when-empty] --input=DIR/REGEX... [--invariant=TEMPLATE]
//	     CMDTEMPLATE --output=TEMPLATE... [--stderr=TEMPLATE] [--error=TEMPLATE...]
//
// An input is a folder and a regular expression on file names (Go's
// syntax, unanchored, named groups allowed); a bare DIR/ means every
// file. With several inputs, files go together when the regexp template
// --invariant ($0, $1, $id, ${id}) expands to the same value for each.
// CMDTEMPLATE, the outputs, --stderr and --error are text/template
// texts over Data: {{.Input N}} (the N-th input's file name),
// {{.Invariant}} and {{.NamedMatches.name}}. An output, log or error
// template that ends in '/' means the first input's own name.
//
// The command runs with the first input on stdin; its stdout becomes the
// first output, its stderr the --stderr file. On success the inputs are
// removed; on failure they move to the --error names and what the command
// wrote to the outputs is removed. Files that match no input's regexp are
// never touched. --quit-when-empty exits once no complete set of inputs
// can be formed.
//
// # Where tpipe differs from pmjq 1.0, on purpose
//
//   - The command template is split into words first (go-shellwords, with
//     {{...}} actions kept whole) and each word is then expanded on its
//     own: a file name with a space, a quote or a '$' stays one argument.
//     pmjq 1.0 expanded the whole text and split it afterwards.
//   - Outputs and the log are written under a temporary name and renamed
//     when complete, so a reader never sees half an output; pmjq 1.0
//     wrote them in place.
//   - Files are locked through package place (a hard link, safe on NFS),
//     not with lock files beside them: a crashed worker's locks are taken
//     back at once on the same host, after the lease on another, where
//     pmjq 1.0 left NAME.lock files that blocked the job for two minutes
//     or, after a crash between two of its steps, for good.
//   - Without --error a failing set is left where it is and the worker
//     goes on (exit status 1 at the end with --quit-when-empty); pmjq 1.0
//     stopped at the first failure. Without --stderr the command's stderr
//     is printed, a job's lines together.
//   - tpipe's own flags work here too (--workers, --lease, --retries,
//     --status, --metrics, the load hooks, the runner's settings...).
//   - File names are checked (package place's ValidName): a name with a
//     control character, "..", or a leading '-' or '.' is never an input,
//     and an output template that expands to one fails the job.
package pmjq1
