#!/bin/sh
# tests/integration/layers.sh - the include rules of docs/architecture.md ("Layers") hold
# for the tree, and tools/check-layers catches each kind of wrong include.
. "$top_srcdir/tests/integration/lib.sh"

CHECK="$top_srcdir/tools/check-layers"

check "the tree follows the layer rules" "$CHECK" "$top_srcdir"

# copy_tree: a writable copy of what the checker reads, in $WORK/tree.
copy_tree() {
	rm -rf "$WORK/tree"
	mkdir -p "$WORK/tree"
	(cd "$top_srcdir" && cp -R core cli sdk plugins docs "$WORK/tree/") && chmod -R u+w "$WORK/tree"
}

# broken DESCRIPTION FILE INCLUDE EXPECTED: add INCLUDE to FILE in a copy; the checker
# must fail (exit 1) with a line matching EXPECTED.
broken() {
	copy_tree
	printf '#include %s\n' "$3" >>"$WORK/tree/$2"
	out=$("$CHECK" "$WORK/tree" 2>&1)
	rc=$?
	if [ "$rc" -eq 1 ] && printf '%s\n' "$out" | grep -Fq -- "$4"; then
		ok "$1"
	else
		not_ok "$1" "exit $rc, expected 1 and a line with: $4" "$out"
	fi
}

n=$(($(wc -l <"$top_srcdir/core/base/log.c") + 1))
broken "base including http is refused, naming file, line and include" core/base/log.c \
	'"core/http/http.h"' \
	"core/base/log.c:$n: includes \"core/http/http.h\" (core/http); core/base may include only its own headers, sdk/include"
broken "model including store is refused" core/model/kinds.h '"core/store/store.h"' \
	'core/model/kinds.h:'
broken "api and engine do not include each other" core/api/api.c '"core/engine/engine.h"' \
	'includes "core/engine/engine.h" (core/engine); core/api may include only'
broken "engine and api do not include each other" core/engine/plan.h '"core/api/watch.h"' \
	'includes "core/api/watch.h" (core/api); core/engine may include'
broken "the observer runs processes without the engine" core/observe/observe.c '"core/engine/engine.h"' \
	'includes "core/engine/engine.h" (core/engine); core/observe may include only'
broken "the state backend and the report are below the engine" core/tfstate/tfstate.c \
	'"core/engine/executor.h"' 'includes "core/engine/executor.h" (core/engine); core/tfstate may include only'
broken "process spawning is base: it includes nothing of ours" core/base/proc.c '"core/store/store.h"' \
	'includes "core/store/store.h" (core/store); core/base may include only'
broken "a lower layer may not reach the daemon" core/engine/engine.c '"core/daemon.h"' \
	'includes "core/daemon.h" (core); core/engine may include'
broken "the CLI includes only base" cli/conf.c '"core/store/db.h"' \
	'cli/conf.c:'
broken "a plugin includes only the SDK, even by a relative path" plugins/sim/sim.c \
	'"../../core/base/log.h"' 'includes "../../core/base/log.h" (core/base); plugins may include only'
broken "a header outside every layer is refused" core/http/http.c '"tests/unit/testutil.h"' \
	'(no layer)'

copy_tree
mkdir "$WORK/tree/core/newthing"
: >"$WORK/tree/core/newthing/newthing.c"
out=$("$CHECK" "$WORK/tree" 2>&1)
rc=$?
expect_eq "a new core/ folder needs a rule of its own" \
	"1 core/newthing/newthing.c: in no layer of docs/architecture.md" "$rc $out"

copy_tree
sed -i '/^<!-- layers/d' "$WORK/tree/docs/architecture.md"
"$CHECK" "$WORK/tree" >"$WORK/out" 2>&1
expect_eq "without its rules the checker fails rather than passes" 2 "$?"

copy_tree
sed -i 's/^core\/plugin   core\/base/core\/plugin   core\/nowhere core\/base/' "$WORK/tree/docs/architecture.md"
out=$("$CHECK" "$WORK/tree" 2>&1)
expect_match "a rule naming an unknown layer is an error" "rule core/plugin names an unknown layer core/nowhere" "$out"

# System and library headers, <rezus/...> and configure's config.h are not layers.
copy_tree
printf '#include <stdio.h>\n#include <rezus/plugin.h>\n#include "config.h"\n' >>"$WORK/tree/cli/conf.c"
check "system headers, the SDK and config.h are allowed everywhere" "$CHECK" "$WORK/tree"

done_testing
