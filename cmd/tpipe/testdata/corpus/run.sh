#!/usr/bin/env bash
# run.sh TPIPE SCRIPT...: runs every case of the toybox and busybox test
# scripts given, once with bash and the system's GNU tools, and once with
# tpipe standing in for the tools tpipe builds in (grep cat seq head tail
# wc rev awk: shims on PATH run 'tpipe TOOL ARGS...'). It prints one line a
# case: "SCRIPT#N<TAB>CLASS<TAB>NAME", where CLASS is
#
#   native    tpipe --no-fallback gives GNU's output and status;
#   fallback  the builtin refuses the line, and tpipe's fallback to the
#             system's program gives GNU's output;
#   wrong     neither;
#   refused   (TPIPE_BEFORE=1, for a tpipe without the fallback) the
#             builtin refused the line with a usage error;
#   same      (TPIPE_BEFORE=1) tpipe gives GNU's output;
#   n/a       the case runs none of those tools.
#
# Output and status are compared, not stderr. Each case runs in bash with
# LC_ALL=C in a scratch directory, with the script's file "input" made
# afresh before each run.
set -u
tpipe=$(readlink -f "$1")
shift
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/case"
cd "$work/case" || exit 1
: > testing.sh
export LC_ALL=C

# shims DIR FLAGS: a directory of scripts that run each tool through tpipe
# and note, in $work/mark, that one ran and whether tpipe refused it.
read -r -d '' shim <<'EOF'
#!/usr/bin/env bash
q=
for a in "$@"; do q+=" '${a//\'/\'\\\'\'}'"; done
err=$(mktemp)
# The fallback must find the system's tool, not this shim again. A
# signal to the shim (kill $! in a case) goes on to tpipe.
PATH=${PATH#@DIR@:} "@TPIPE@" @FLAGS@ "@TOOL@$q" 2>"$err" <&0 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null' TERM INT
wait $pid
rc=$?
[ $rc -gt 128 ] && kill -0 $pid 2>/dev/null && { wait $pid; rc=$?; }
e=$(<"$err")
rm -f "$err"
echo ran >> "@WORK@/mark"
if [[ $e == *"not implemented by the builtin"* || $e == *"invalid option --"* ||
	$e == *"unrecognized option"* || $rc == 2 && $e == "tpipe: "* ]]; then
	echo refused >> "@WORK@/mark"
fi
[ -n "$e" ] && printf '%s\n' "$e" >&2
exit $rc
EOF
shims() {
	mkdir -p "$1"
	local tool s
	for tool in grep cat seq head tail wc rev awk; do
		s=${shim//@TPIPE@/$tpipe}
		s=${s//@FLAGS@/$2}
		s=${s//@TOOL@/$tool}
		s=${s//@DIR@/$1}
		printf '%s\n' "${s//@WORK@/$work}" > "$1/$tool"
		chmod +x "$1/$tool"
	done
}
shims "$work/.nofb" --no-fallback
shims "$work/.fb" ""

# run DIR CMD STDIN OUT: the case's command under bash, with DIR's shims
# first on PATH (none for ""), in a copy of the scratch directory as the
# script left it, so that a case that changes its files (echo two >> one)
# finds them the same in every run.
run() {
	rm -rf "$work/run"
	cp -a . "$work/run"
	: > "$work/mark"
	(
		cd "$work/run" || exit 1
		printf '%b' "$infile" > input
		printf '%b' "$3" | PATH="${1:+$1:}$PATH" timeout 30 bash -c "$2" > "$4" 2>/dev/null
		echo "status $?" >> "$4"
	)
}

testing() {
	n=$((n + 1))
	local name=$1 cmd=$2
	infile=$4
	local stdin=$5 class
	# A case that races its own sleeps (tail -f beside echo >> a quarter
	# of a second later) depends on how loaded the machine is: a wrong
	# result of such a case is tried again, up to three times in all.
	for _ in 1 2 3; do
		run "" "$cmd" "$stdin" "$work/gnu"
		if [ -n "${TPIPE_BEFORE:-}" ]; then
			run "$work/.fb" "$cmd" "$stdin" "$work/tp" # it has no --no-fallback
		else
			run "$work/.nofb" "$cmd" "$stdin" "$work/tp"
		fi
		if ! grep -q ran "$work/mark"; then
			class=n/a
		elif cmp -s "$work/gnu" "$work/tp"; then
			class=native
			[ -n "${TPIPE_BEFORE:-}" ] && class=same
		elif grep -q refused "$work/mark"; then
			class=refused
			if [ -z "${TPIPE_BEFORE:-}" ]; then
				run "$work/.fb" "$cmd" "$stdin" "$work/tp"
				class=wrong
				cmp -s "$work/gnu" "$work/tp" && class=fallback
			fi
		else
			class=wrong
		fi
		[ "$class" = wrong ] && [[ $cmd == *sleep* ]] || break
	done
	if [ "$class" = wrong ] && [ -n "${TPIPE_CORPUS_DEBUG:-}" ]; then
		diff "$work/gnu" "$work/tp" | sed 's/^/    /' >&2
	fi
	printf '%s#%d\t%s\t%s\n' "$suite" "$n" "$class" "$name"
}
# toybox's helpers: testcmd runs the command the script is named after.
testcmd() { testing "$1" "$C $2" "$3" "$4" "$5"; }
optional() { :; }
skipnot() { :; }
toyonly() { "$@"; }

for script in "$@"; do
	path=$here/$script
	suite=$script
	C=$(basename "$script")
	C=${C%%.*}
	(
		n=0
		SKIP=
		FAILCOUNT=0
		COMMAND=$C
		. "$path"
	) < /dev/null
done
