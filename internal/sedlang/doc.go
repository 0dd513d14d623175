// Package sedlang is the language of sed, as much of GNU sed's as tpipe
// runs: a script is parsed once into a Script, and a Run carries it over a
// stream of lines.
//
// The split with the sed command (builtin/sed.go) is language against I/O.
// This package knows addresses and ranges, the commands { } = d p q Q s
// y, the flags of s, what a replacement means, the line held back while
// the script waits to learn whether it is the last ($), and GNU's rule for
// a last line without a newline. It does not know files, ports, options
// or exit codes: the caller feeds records to Run.Line, passes an emit
// function for the output, calls Run.End at the end of the input, and
// turns Run.Status into an exit status.
//
// Regexes are POSIX ones, read by internal/posixre with its Sed flag;
// one with no special character is searched as a plain string.
//
// Errors are values with GNU's position: an *Error names the -e piece and
// the number of characters of it read, so that "sed: " and its Error text
// is GNU's message. A script that parses can still fail as it runs, in one
// way (the empty regex used before any other), which Run.Line reports as
// an *Error once and which ends the run with status 1.
//
// The commands of GNU sed that tpipe does not run (a, b, c, D, G, h, n, N,
// ...) are refused when the script is parsed, never run differently.
package sedlang
