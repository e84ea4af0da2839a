#!/usr/bin/env bash
# probe_ceiling.sh LIB...: the most a better probe site could reach
# (docs/BENCHMARKS.md, "Probe placement"): of each library's exported
# functions (.dynsym FUNC with an address and a size; aliases of one
# address each counted, as bench/probe_share counts them),
# how many have, in their entry block (from the first instruction to the
# first jmp or ret), an instruction the kernel emulates at a breakpoint
# (push of a register, call/jmp/jcc to an address, nop) that no branch of
# the function lands on or before (so it runs exactly once per call), and
# no indirect jmp (a jump table could land there). Decoded by objdump.
# PROBE_SHARE_PREFIX=TEXT: only the functions named with it (as probe_share).
# Prints: lib=PATH functions=N site=S none=X back=B indirect=I share=P%
set -u
command -v objdump > /dev/null && command -v readelf > /dev/null ||
	{ echo "probe_ceiling: objdump and readelf (binutils) are needed" >&2; exit 1; }
for lib in "$@"; do
	readelf -W --dyn-syms "$lib" | awk -v pre="${PROBE_SHARE_PREFIX:-}" '$4 == "FUNC" && $7 != "UND" && $3 != "0" && index($8, pre) == 1 { print $2, $3 }' > /tmp/probe_ceiling.$$.syms
	objdump -d --no-show-raw-insn "$lib" | awk -v lib="$lib" -v symfile=/tmp/probe_ceiling.$$.syms '
		function hex(s,   v, i, c) {
			v = 0; s = tolower(s); sub(/^0x/, "", s)
			for (i = 1; i <= length(s); i++) {
				c = index("0123456789abcdef", substr(s, i, 1))
				if (!c) break
				v = v * 16 + c - 1
			}
			return v
		}
		BEGIN {
			while ((getline l < symfile) > 0) {
				split(l, f, " ")
				a = hex(f[1]); s = f[2] ~ /^0x/ ? hex(f[2]) : f[2] + 0
				if (a && s) { size[a] = s; names[a]++ }
			}
		}
		/^ *[0-9a-f]+:\t/ {
			addr = hex(substr($1, 1, length($1) - 1))
			k = 2; if ($k == "bnd" || $k == "notrack") k++
			mn = $k; ops = $(k + 1)
			n++; A[n] = addr; M[n] = mn; O[n] = ops
		}
		function emulated(mn, ops) {
			if (mn ~ /^push/ && ops ~ /^%/) return 1
			if (mn ~ /^(call|jmp)/ && ops !~ /\*/) return 1
			if (mn ~ /^j/ && ops !~ /\*/) return 1
			if (mn ~ /^nop/ && ops == "") return 1
			return 0
		}
		END {
			for (i = 1; i <= n; i++) idx[A[i]] = i
			for (start in size) {
				start += 0
				if (!(start in idx)) continue
				end = start + size[start]; w = names[start]; fns += w
				site = -1; stop = 0; back = 0; ind = 0
				for (i = idx[start]; i <= n && A[i] < end; i++) {
					if (!stop && site < 0) {
						if (emulated(M[i], O[i])) site = A[i]
						else if (M[i] ~ /^(ret|jmp)/) stop = 1
					}
				}
				if (site < 0) { none += w; continue }
				for (i = idx[start]; i <= n && A[i] < end; i++) {
					if (M[i] ~ /^j/ && O[i] ~ /\*/) ind = 1
					if (M[i] ~ /^(j|loop)/ && O[i] ~ /^[0-9a-f]+$/) {
						t = hex(O[i])
						if (t > start && t <= site) back = 1
					}
				}
				if (back) { backs += w; continue }
				if (ind && site != start) { inds += w; continue }
				ok += w
			}
			printf "lib=%s functions=%d site=%d none=%d back=%d indirect=%d share=%.1f%%\n", lib, fns, ok, none, backs, inds, 100 * ok / fns
		}'
	rm -f /tmp/probe_ceiling.$$.syms
done
