#!/bin/sh
# `rdmaqual compare` on large results.json files (printed, not judged).
# A 16-node lab run of the node cases (--launcher local, the synthesized
# trees) gives real rows; they are copied under new node names until the
# file reaches SIZE_MB (default 112), once as "before" and once as "after"
# with every figure 1% lower, and both are compared with the tables
# (default) and --json.  Figures: wall time and maximum RSS from
# /usr/bin/time -v, beside the files' size.  Goal (docs/compare.md):
# memory grows with the rows' figures in compact form, well under the
# 1.2 GB two jansson trees of 112 MB took.
# Env: SIZE_MB (112), RQ (./rdmaqual); RQ_BEFORE=BIN measures another
# build (an older commit's) in the same run, for a before/after figure.
set -eu
cd "$(dirname "$0")/.." || exit 1
RQ=${RQ:-./rdmaqual}
SIZE_MB=${SIZE_MB:-112}
[ -x "$RQ" ] || { echo "build rdmaqual first (make)"; exit 1; }
[ -x /usr/bin/time ] || { echo "bench needs /usr/bin/time (package time)"; exit 1; }
T=$(mktemp -d /tmp/rq-bench-compare.XXXXXX)
trap 'rm -rf "$T"' EXIT
export RDMAQUAL_STATE_DIR="$T/state"
mkdir -p "$T/lab"
i=0
for t in cx7-ndr-ib cx6-hdr-ib cx6dx-roce-2numa cx5-edr-ib; do
	for _ in 1 2 3 4; do
		i=$((i + 1))
		ln -s "$PWD/fixtures/nodes/$t" "$T/lab/$(printf 'n%02d' $i)"
	done
done
"$RQ" run --nodes 'n[01-16]' --launcher local --target "sysroot:$T/lab" --report-dir "$T/r" \
	cases/driver cases/pcie cases/mtu cases/irq >"$T/run.out" 2>&1 || true
[ -s "$T/r/latest/results.json" ] || { echo "the lab run made no results.json:"; tail "$T/run.out"; exit 1; }
python3 - "$T/r/latest/results.json" "$SIZE_MB" "$T/before.json" "$T/after.json" <<'PY'
import json, sys
src, size_mb, out_b, out_a = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
doc = json.load(open(src))
rows = doc["results"]
per_row = len(json.dumps(rows, indent=2)) / len(rows)
copies = int(size_mb * 1e6 / per_row / len(rows)) + 1
for path, scale in ((out_b, 1.0), (out_a, 0.99)):
    out = []
    for c in range(copies):
        for r in rows:
            r2 = dict(r)
            if r.get("node"):
                node = "%s-c%04d" % (r["node"], c)
                r2["id"] = r["id"].replace("[" + r["node"], "[" + node, 1)
                r2["node"] = node
            else:
                r2["id"] = "%s#%d" % (r["id"], c)
            r2["figures"] = [dict(f, value=f["value"] * scale if isinstance(f["value"], (int, float)) else f["value"])
                             for f in r.get("figures", [])]
            out.append(r2)
    d = dict(doc)
    d["results"] = out
    d["counts"] = dict(doc["counts"], total=len(out))
    d.pop("lab", None)
    with open(path, "w") as f:
        json.dump(d, f, indent=2)
        f.write("\n")
PY
echo "host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "files: $(du -m "$T/before.json" | cut -f1) MB and $(du -m "$T/after.json" | cut -f1) MB," \
	"$(grep -c '"verdict"' "$T/before.json") rows each"
measure() {	# label binary args...
	label=$1
	bin=$2
	shift 2
	/usr/bin/time -v -o "$T/time" "$bin" compare "$@" "$T/before.json" "$T/after.json" \
		>"$T/cmp.out" 2>"$T/cmp.err" || true
	awk -v label="$label" '/Elapsed/ { n = split($NF, p, ":"); s = 0
			for (i = 1; i <= n; i++) s = s * 60 + p[i]; wall = s }
		/Maximum resident/ { rss = $NF / 1024 }
		END { printf "  %-34s wall %6.1f s   max RSS %7.1f MiB\n", label, wall, rss }' "$T/time"
	grep -m1 -E '^(result|rdmaqual compare:)' "$T/cmp.out" "$T/cmp.err" | sed 's/^[^:]*:/    /' || true
}
for b in ${RQ_BEFORE:+"$RQ_BEFORE"} "$RQ"; do
	tag=$([ "$b" = "$RQ" ] && echo this || echo before)
	measure "compare ($tag build)" "$b"
	measure "compare --json ($tag build)" "$b" --json
done
