# dynprof installed as a package would be: what --help points at is there,
# make install says how to start the unit only where systemd reads it, and
# make uninstall takes back all it put.

REPO=$(cd "$DYNPROF_TESTS/.." && pwd)

install_to() { # install_to PREFIX: the suite's build, installed there
	# -o all: the build is the suite's, already made (SANITIZE runs use build/san).
	make -s -C "$REPO" -o all install BUILD="$B" PREFIX="$1" > $T/install.out 2>&1 ||
		fail "make install failed: $(cat $T/install.out)"
}

test_install_puts_every_document_the_help_names() {
	install_to $T/prefix
	local doc names
	names=$("$T/prefix/bin/dynprof" --help | grep -o '[A-Z][A-Z-]*\.md' | sort -u)
	[ -n "$names" ] || fail "--help names no document"
	for doc in $names; do
		[ -s "$T/prefix/share/doc/dynprof/$doc" ] || fail "--help names $doc, not installed in share/doc/dynprof"
	done
	[ -s "$T/prefix/share/man/man8/dynprof.8" ] || fail "no man page installed"
	"$T/prefix/bin/dynprof" --help | grep -q 'share/doc/dynprof' || fail "--help does not say where its documents are"
}

test_install_outside_systemds_paths_does_not_suggest_enable() {
	install_to $T/prefix
	grep -q "where systemd does not look for units" $T/install.out ||
		fail "no word that systemd does not read $T/prefix/lib/systemd/system: $(cat $T/install.out)"
	grep -q "start it with: systemctl" $T/install.out && fail "suggests systemctl enable for a folder systemd does not read"
	return 0
}

test_uninstall_takes_back_all_install_put() {
	install_to $T/prefix
	make -s -C "$REPO" uninstall PREFIX=$T/prefix > $T/uninstall.out 2>&1 || fail "make uninstall failed: $(cat $T/uninstall.out)"
	local left; left=$(find $T/prefix -type f)
	[ -z "$left" ] || fail "left after make uninstall: $left"
	make -s -C "$REPO" help | grep -q '^make uninstall ' || fail "make help does not list uninstall"
}

# An option's text starts in one column, or on the next line when the option
# is too long (the switch lists, several options a line, are another layout).
test_help_options_are_aligned() {
	local bad
	"$DP" --help > $T/help || fail "--help failed"
	[ "$(grep -c "^  --" $T/help)" -gt 40 ] || fail "--help lists too few options: $(head -3 $T/help)"
	bad=$(awk '/^  --[^ ,]+ / && !/^  --[^ ,]+ +--/ && substr($0, 5) !~ /  --/ {
		if (match($0, /^  --[^ ]+ +/) && RLENGTH != 26) print }' $T/help | grep -v '^  --remote=PATH CMD')
	[ -z "$bad" ] || fail "misaligned --help lines: $bad"
}
