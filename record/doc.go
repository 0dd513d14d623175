// Package record turns byte streams into records and records back into
// byte streams.
//
// A record is a []byte: the unit of data that tasks of a tpipe pipeline
// pass to each other, through ports modelled here as a Source (input) and a
// Sink (output). A Framing says where records start and end in a stream:
//
//   - Lines: a record is a line and includes its '\n'. Only the last line of
//     a stream may lack the '\n'; it is a record all the same and is written
//     back without one, so splitting a stream into lines and appending them
//     gives back the same bytes, whatever they are.
//   - NUL: the same with '\x00' for '\n'.
//   - LengthPrefixed: a 4-byte big-endian length, then the record.
//   - Fixed(n): records of exactly n bytes.
//
// Each Framing's Split has the shape of a bufio.SplitFunc and does no I/O,
// so the framing logic is tested on byte slices. A stream that ends between
// records ends cleanly (io.EOF, or a nil Err); one that ends inside a
// record that cannot be short is an error wrapping io.ErrUnexpectedEOF.
// Records have a maximum size, the record size of the pipeline; a longer
// one is a *TooLargeError, which matches ErrTooLarge.
//
// Three adapters join records and streams:
//
//   - Scanner reads the records of an io.Reader. Scan blocks in the
//     reader's Read. The slice Record returns is the Scanner's and is valid
//     until the next Scan.
//   - Writer is an io.Writer that writes the records of the stream written
//     to it to a Sink. Write and Close block in the sink's Write; Write
//     does not retain its argument.
//   - NewReader returns an io.Reader over the records of a Source. Its Read
//     blocks in the source's Read. A record from a Source is valid until
//     the next Read of that Source.
//
// None of them allocates per record, and none is safe for concurrent use.
package record
