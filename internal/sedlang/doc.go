// Package sedlang is the language of sed, GNU sed 4.9's in the C locale:
// a script is parsed once into a Script, and a Run carries it over a
// stream of lines.
//
// The split with the sed command (builtin/sed.go) is language against
// I/O. This package knows addresses and ranges, every command but e (s y
// p P d D n N g G h H x b t T : a i c r R w W = l q Q z F { }), the flags
// of s and what a replacement means, the pattern and hold spaces, the
// append queue, and GNU's rule for a last line without its newline. It
// does not know options, ports or exit codes: the caller gives the
// command line's say as Options and Pieces, the files the script names
// through an IO, pushes records to Run.Line, marks the end of a file
// (Run.EndFile, for -s and -i) and of the input (Run.End), and turns
// Run.Status into an exit status.
//
// A Run is a resumable cycle: n and N, which read input in the middle of
// the script, leave the cycle waiting where it is until the next record is
// pushed; a script that asks for the last line ($) has each record wait
// for the next one. So the caller's loop stays a plain push of records,
// and the run keeps no goroutine.
//
// Regexes are POSIX ones, read by internal/posixre with its Sed flag (and
// Newline for the M flag). Before the regexp, the common shapes are found
// by plain means (see fast): a string by bytes.Index, ^ and $ against the
// ends, a run of a class at either end by a scan. A pattern RE2 cannot
// run (a back-reference \1, a \< or \> away from a word character) runs
// on internal/backtrack instead, behind its RE2 prefilter, with the same
// flags, groups, counted and global replacements; no other pattern
// touches the backtracker.
//
// Errors are values with GNU's position: an *Error names the -e piece and
// the number of characters of it read, or the -f file and line, so that
// "sed: " and its Error text is GNU's message. A script GNU runs and tpipe
// does not (e, s///e, an interval past RE2's 1000) is an *Error with
// Unsupported set, never run differently: the caller may hand it to the
// system's sed. A script that parses can still fail as it runs: the
// empty regex used before any other (an *Error, with status 1, as GNU),
// a space past IO.MaxSpace (a *SpaceError), or IO.Stop's error while it
// loops.
package sedlang
