#!/usr/bin/env bash
# Large .npy inputs (issue 29): slc against NumPy's memmap on a 4 GiB f32[1048576, 1024] file,
# and slc's mapped input against its read path on a slice that touches everything.
#
#   bash benches/npy_mmap.sh [SLC] [ROUNDS] [DIR]
#
# SLC: the binary (default target/release/slc); ROUNDS: runs per row, the median is printed
# (default 3); DIR: where the 4 GiB file is written (default a temporary directory; the files
# are deleted at the end). Times are wall-clock seconds of the whole process (NumPy's include
# the interpreter's start), peak memory is the process's maximum resident set (GNU time's %M).
# "just written": the first run after the file is written (its pages still in the page cache
# from the write); "warm": the following runs. A cold row drops the file's pages first
# (posix_fadvise DONTNEED, which needs no privileges).
set -euo pipefail
SLC=$(realpath "${1:-target/release/slc}")
ROUNDS=${2:-3}
DIR=${3:-$(mktemp -d)}
BIG="$DIR/big.npy"
OUT="$DIR/out.npy"
trap 'rm -f "$BIG" "$OUT" "$DIR/time" "$DIR/idx.npy"' EXIT

python3 - "$BIG" <<'EOF'
import sys, numpy as np
a = np.lib.format.open_memmap(sys.argv[1], mode="w+", dtype=np.float32, shape=(1048576, 1024))
for r in range(0, a.shape[0], 65536):
    a[r:r + 65536] = np.arange(r * 1024, (r + 65536) * 1024, dtype=np.float32).reshape(65536, 1024)
a.flush()
EOF

drop_cache() {
    python3 -c "import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)" "$BIG"
}

# Runs "$@" ROUNDS times; prints the first run's time, the median time and the median peak RSS.
measure() {
    local label=$1
    shift
    local times=() rss=() line
    for _ in $(seq "$ROUNDS"); do
        /usr/bin/time -o "$DIR/time" -f '%e %M' "$@" > /dev/null 2>&1
        line=$(tail -1 "$DIR/time")
        times+=("${line% *}")
        rss+=("${line#* }")
    done
    median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
    printf '%-58s first %6.3f s   median %6.3f s   peak RSS %7.1f MB\n' "$label" "${times[0]}" \
        "$(median "${times[@]}")" "$(echo "$(median "${rss[@]}") / 1024" | bc -l)"
}

NP_SLICE="import numpy as np; np.save('$OUT', np.load('$BIG', mmap_mode='r')[::1000, :4])"
measure "slc eval 'a[::1000, :4]' (read in parts)" "$SLC" eval 'a[::1000, :4]' -i "a=$BIG" -o "$OUT"
measure "NumPy np.load(mmap_mode='r')[::1000, :4]" python3 -c "$NP_SLICE"
GATHER="import numpy as np; np.save('$DIR/idx.npy', np.random.default_rng(0).integers(0, 1048576, 10000))"
python3 -c "$GATHER"
measure "slc eval 'a[i]' (10,000 random rows, mapped)" "$SLC" eval 'a[i]' -i "a=$BIG" -i "i=$DIR/idx.npy" -o "$OUT"
measure "NumPy np.load(mmap_mode='r')[i]" python3 -c \
    "import numpy as np; np.save('$OUT', np.load('$BIG', mmap_mode='r')[np.load('$DIR/idx.npy')])"
rm -f "$DIR/idx.npy"

# Cold: the file's pages dropped before each run.
cold() {
    local label=$1
    shift
    local times=() line
    for _ in $(seq "$ROUNDS"); do
        drop_cache
        /usr/bin/time -o "$DIR/time" -f '%e %M' "$@" > /dev/null 2>&1
        line=$(tail -1 "$DIR/time")
        times+=("${line% *}")
    done
    printf '%-58s cold median %6.3f s\n' "$label" "$(printf '%s\n' "${times[@]}" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')"
}
cold "slc eval 'a[::1000, :4]' (read in parts)" "$SLC" eval 'a[::1000, :4]' -i "a=$BIG" -o "$OUT"
cold "NumPy np.load(mmap_mode='r')[::1000, :4]" python3 -c "$NP_SLICE"

# A slice that touches everything: the mapped input against the read path (standard input is
# read, never mapped), alternating run by run so that both see the same load. The output goes
# to /dev/null, written in place.
MAPPED=("$SLC" eval 'a[::-1]' -i "a=$BIG" -o /dev/null)
READ=(sh -c "\"$SLC\" eval 'a[::-1]' -i a=- -o /dev/null < \"$BIG\"")
for state in cold warm; do
    for _ in $(seq "$ROUNDS"); do
        for way in mapped read; do
            [ "$state" = cold ] && drop_cache
            if [ "$way" = mapped ]; then
                /usr/bin/time -o "$DIR/time" -f '%e' "${MAPPED[@]}" > /dev/null 2>&1
            else
                /usr/bin/time -o "$DIR/time" -f '%e' "${READ[@]}" > /dev/null 2>&1
            fi
            echo "slc eval 'a[::-1]' $state $way $(tail -1 "$DIR/time") s"
        done
    done
done
