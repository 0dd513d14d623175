package corpus

// Pipeline is one line of the corpus, written once for both tools: bash
// runs it as it is (under LC_ALL=C; without pipefail, under which a sort
// that head stops early fails with SIGPIPE), tpipe takes it as its
// one argument. Both run in the directory of the inputs, so the files are
// named as a user would name them.
type Pipeline struct {
	Name string
	Line string
	// Everyday marks the pipelines whose geometric mean is issue 19's
	// goal: the six of the table and four more of the same kinds.
	Everyday bool
	// What says, for the report, what the pipeline stands for.
	What string
}

// Pipelines is the corpus. The first six are the table of issue 19, in its
// order.
var Pipelines = []Pipeline{
	{"sort-keys-head", `sort -t' ' -k10,10n -k1,1 access.log | head -3`, true,
		"smallest responses, ties by client: two keys, one numeric"},
	{"distinct-words", `tr -s ' ' '\n' < access.log | sort | uniq | wc -l`, true,
		"distinct fields of the log: a sort of 10 million short lines"},
	{"top-clients", `cut -d' ' -f1 access.log | sort | uniq -c | sort -rn | head -3`, true,
		"the busiest clients"},
	{"top-paths", `cut -d'"' -f2 access.log | cut -d' ' -f2 | sort | uniq -c | sort -rn | head -3`, true,
		"the most requested paths"},
	{"sort-tail", `sort access.log | tail -1`, true,
		"the last line in byte order: a whole-line sort"},
	{"sed-wc", `sed 's/GET/PUT/; s/[0-9]\+$/N/' access.log | wc -c`, true,
		"two substitutions, one a regular expression"},
	{"status-counts", `cut -d' ' -f9 access.log | sort | uniq -c`, true,
		"requests per status code"},
	{"not-found", `grep ' 404 ' access.log | wc -l`, true,
		"a literal filter and a count"},
	{"bytes-sum", `grep '" 200 ' access.log | awk '{s += $10} END {print s}'`, true,
		"bytes sent with status 200: a filter and an awk sum (awk is a program for both)"},
	{"word-freq", `tr -cs A-Za-z '\n' < words.txt | tr A-Z a-z | sort | uniq -c | sort -rn | head -10`, true,
		"the ten most frequent words of a text"},
	{"largest", `sort -t' ' -k10,10nr access.log | head -5`, false,
		"the five largest responses: a numeric key, reversed"},
	{"per-hour", `cut -d: -f2 access.log | sort | uniq -c`, false,
		"requests per hour of the day"},
	{"dict-unique", `sort -u words.txt dict.txt | wc -l`, false,
		"distinct lines of two files"},
	{"errors-by-client", `grep -v '" [23]0[0-9] ' access.log | cut -d' ' -f1,9 | sort | uniq -c | sort -k1,1nr -k2 | head -5`, false,
		"clients with the most failed requests, by status"},
}
