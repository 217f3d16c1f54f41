#!/bin/sh
# The manual pages against what they describe: every command of rezusctl's command table
# (cli/main.c) has its entry in rezusctl(1), and every long option of its long_opts table is
# named there (and only those); no page, SDK header or help text refers to the project's
# internal documents; every option of rezus-plugin-check's --help is
# in rezus-plugin-check(1), every page renders without a groff warning and every page a
# SEE ALSO names is one the build installs. (rezuscloud(8)'s options and rezus.conf(5)'s
# settings are checked by daemon.sh, against --help and the settings table.)
. "${top_srcdir:-.}/tests/integration/lib.sh"

MAN="$top_srcdir/man"
table=$(sed -n '/^} commands\[\] = {/,/^};/s/^\t{ "\([a-z-]*\)", rzc_cmd_.*/\1/p' "$top_srcdir/cli/main.c" | sort -u | tr '\n' ' ')
expect_match "the command table is read from cli/main.c" "(^| )get .*version " "$table"
man_cmds=$(sed -n '/^\.SH COMMANDS/,/^\.SH GLOBAL/p' "$MAN/rezusctl.1" | grep '^\.B [a-z]' |
	sed 's/^\.B //; s/\\-/-/g; s/ .*//; s/\\fR.*//' | sort -u | tr '\n' ' ')
expect_eq "rezusctl(1) has an entry for exactly the commands of the table" "$table" "$man_cmds"

# every long option of rezusctl (the long_opts table of cli/main.c) is in rezusctl(1), and
# every --option the page names is one rezusctl takes
opts=$(sed -n '/^static const struct option long_opts\[\] = {/,/^};/s/^\t{ "\([a-z-]*\)", .*/--\1/p' "$top_srcdir/cli/main.c" | sort -u)
expect_match "the long options are read from cli/main.c" '--tenant.*--watch' "$(echo $opts)"
page_opts=$(sed 's/\\-/-/g' "$MAN/rezusctl.1" | grep -o -- '--[a-z][a-z-]*' | sort -u)
expect_eq "rezusctl(1) names every long option of rezusctl" "" \
	"$(printf '%s\n' "$page_opts" | comm -13 - "$(printf '%s\n' "$opts" >"$WORK/opts"; echo "$WORK/opts")" | tr '\n' ' ')"
expect_eq "and no option rezusctl does not take" "" \
	"$(printf '%s\n' "$page_opts" | comm -23 - "$WORK/opts" | tr '\n' ' ')"
expect_match "with --dry-run's values" 'dry-run=server.*dry-run=client.*dry-run=none' \
	"$(sed 's/\\-/-/g; s/\\f[BIR]//g' "$MAN/rezusctl.1" | tr '\n' ' ')"

# what ships speaks of the product only: no reference to the project's internal documents
# in the help texts, the SDK's headers or the man pages
internal='\bSPEC\b|§|design card|\bissues?\b'
for f in "$MAN"/*.[0-9] "$top_srcdir"/sdk/include/rezus/*.h; do
	expect_eq "$(basename "$f") names no internal document" "" \
		"$(sed 's/\\f[BIRP]//g; s/\\-/-/g' "$f" | grep -nE "$internal")"
done
expect_eq "nor does rezus-plugin-check --help" "" "$("$top_builddir/rezus-plugin-check" --help 2>&1 | grep -nE "$internal")"
leaks=""
for cmd in "" $(sed -n '/^} commands\[\] = {/,/^};/s/^\t{ "\([a-z-]*\)", rzc_cmd_.*/\1/p' "$top_srcdir/cli/main.c"); do
	"$top_builddir/rezusctl" help $cmd 2>&1 | grep -qE "$internal" && leaks="$leaks ${cmd:-(--help)}"
done
expect_eq "nor rezusctl --help and help COMMAND" "" "$leaks"

help_opts=$("$top_builddir/rezus-plugin-check" --help | grep -o -- '--[a-z-]*' | sort -u | tr '\n' ' ')
man_opts=$(sed 's/\\-/-/g' "$MAN/rezus-plugin-check.1" | sed -n '/^\.SH OPTIONS/,/^\.SH /p' | grep -o -- '--[a-z-]*' | sort -u | tr '\n' ' ')
expect_eq "rezus-plugin-check(1) documents exactly the options of --help" "$help_opts" "$man_opts"

pages=$(grep -ho "man/[a-z.-]*\.[0-9]" "$top_srcdir"/*/local.mk "$top_srcdir"/*/*/local.mk "$top_srcdir/Makefile.am" | sort -u)
expect_match "the build installs rezus-plugin(7) and rezus-plugin-check(1)" \
	'man/rezus-plugin\.7.*man/rezus-plugin-check\.1|man/rezus-plugin-check\.1.*man/rezus-plugin\.7' "$(echo $pages)"
for p in $pages; do
	out=$(LC_ALL=C.UTF-8 groff -man -ww -z "$top_srcdir/$p" 2>&1)
	expect_eq "$p renders without a groff warning" "" "$out"
done
installed=$(for p in $pages; do b=$(basename "$p"); echo "${b%.*}(${b##*.})"; done | sort | tr '\n' ' ')
for p in $pages; do
	for ref in $(sed -n '/^\.SH SEE ALSO/,$s/^\.BR \([a-z.-]*\) (\([0-9]\)).*/\1(\2)/p' "$top_srcdir/$p"); do
		case " $installed " in
		*" $ref "*) ok "$p: SEE ALSO $ref is installed" ;;
		*) not_ok "$p: SEE ALSO $ref is installed" "installed: $installed" ;;
		esac
	done
done
done_testing
