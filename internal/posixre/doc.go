// Package posixre runs POSIX regular expressions, as GNU grep and GNU sed
// read them in the C locale, on Go's regexp package.
//
// The model: a pattern is translated once into RE2 syntax (Translate) and
// compiled (Compile, CompileAny); nothing of POSIX is left at match time.
// What RE2 cannot do is refused at translation, never matched differently:
// a back-reference (\1) or an interval over 1000 is an *Error, as is any
// pattern GNU rejects. An *Error's text is GNU's message where GNU has one,
// so that a command can print it as GNU would; its Offset says where in the
// pattern the problem was found.
//
// What the translation keeps of GNU, in the C locale:
//
//   - BRE (Basic): \( \) group, \{m,n\} interval, \| alternation; \+ and \?
//     are operators. A '*' is literal at the start of a branch, and right
//     after a leading '^', as are \{ \+ \?. A '^' is an anchor only at the
//     start of a branch, a '$' only at its end; elsewhere both are literal.
//   - ERE (Extended): ( ) { } | + ? are operators; '^' and '$' are always
//     anchors, and an operator right after one makes it optional or not.
//     An operator with nothing to repeat is dropped; a '{' that does not
//     open a valid interval is literal, and so is an unmatched ')'.
//   - With the Sed flag, the stricter parse of GNU sed's regcomp: an ERE
//     operator with nothing to repeat, a BRE \{ at the start of a branch,
//     a** in a BRE, a bad ERE interval and an unmatched ')' are errors.
//     sed's escapes for control characters (\n \t \a \f \v \r) work, and
//     '.' matches a newline, which a pattern space may hold.
//   - In both: bracket expressions with [:class:], [=c=] and [.c.]; the
//     escapes \w \W \s \S \b \B \` \'; \< and \> where the piece after
//     (before) them surely matches a word character, so that RE2's \b says
//     the same; any other escaped character stands for itself.
//   - IgnoreCase folds ASCII letters only: a letter becomes a class of its
//     two cases.
//
// Go's regexp reads UTF-8, not bytes: by default a pattern or line with
// non-ASCII bytes is matched as Go decodes it ('.' takes a whole valid
// UTF-8 sequence, and every stray byte reads as U+FFFD, so that any two
// match each other). The Bytes flag reads them as GNU does in the C
// locale, where every byte is a character: each byte c >= 0x80 of the
// pattern becomes a rune of its own, ByteRune(c), and a line that holds
// such bytes is matched through Encode, which writes each as that rune;
// DecodeOffsets takes the offsets of a match back to the line. A line of
// ASCII alone (HasHigh) reads the same either way and is matched as it
// is. grep and sed use Bytes, with the backtracker as with RE2.
//
// A Matcher wraps a compiled pattern with a cheaper test for the common
// shapes (strings joined by ".*", a string every match needs), so that
// most lines are decided by bytes.Index instead of the regexp.
//
// Everything here is safe for concurrent use: translation has no state
// outside one call, and a Matcher, like a *regexp.Regexp, is read-only
// once made.
package posixre
