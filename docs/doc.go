// Package docs holds tpipe's user documentation, in Markdown beside this
// file. It has no code: its test checks that README.md stays a short first
// contact with a table of contents, and that every relative link of the
// documentation (README.md, docs/*.md, bench/README.md, ARCHITECTURE.md)
// names a file that exists and, into Markdown, a heading that does.
package docs
