#!/usr/bin/env bash
# The compile-speed benchmark of issue 13 (docs/performance.md): compile time and peak
# memory of stacked-convolution MIL models against the time `cp` takes to copy the weight
# file, measured in one run on this machine, plus the small models and a long MIL file.
#
#   scripts/bench/compile_speed.sh [WORKDIR]     # default WORKDIR: /tmp/anec-bench
#
# LAYERS (default "3 120 239": 12.6M, 503M and 1.00B parameters of 2048x2048 1x1
# convolutions), FP32_LAYERS (default "120") and PALETTE_LAYERS (default "120": 4-bit
# palettized weights) choose the models. Needs python3 with
# numpy and about 3x the largest weight file of free disk in WORKDIR. Not part of the
# test run.
set -euo pipefail
cd "$(dirname "$0")/../.."
work="${1:-/tmp/anec-bench}"
layers="${LAYERS:-3 120 239}"
fp32_layers="${FP32_LAYERS:-120}"
palette_layers="${PALETTE_LAYERS:-120}"
mkdir -p "$work"
cargo build --release -p anec >/dev/null 2>&1
anec="$PWD/target/release/anec"

# seconds and peak RSS (KB) of a command writing OUT (removed first), the median of three
# runs. Each run starts after `sync` with OUT gone, so that neither the previous run's
# dirty pages nor replacing a file of the same size (ext4 flushes a file renamed or
# truncated over another) are counted: the compile and `cp` are measured alike.
measure() {
  local out_path=$1; shift
  local runs=() rss=0
  for _ in 1 2 3; do
    local out
    rm -rf "$out_path"; sync
    /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >/dev/null 2>&1
    out=$(tail -1 "$work/time.txt")
    runs+=("${out% *}")
    rss="${out#* }"
  done
  local median
  median=$(printf '%s\n' "${runs[@]}" | sort -g | sed -n 2p)
  echo "$median $rss"
}

# seconds and peak RSS (KB) of one run
measure_once() {
  /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >/dev/null 2>&1
  tail -1 "$work/time.txt"
}

row() { # name dir
  local name=$1 dir=$2
  local bytes
  bytes=$(stat -c %s "$dir/weights/weight.bin")
  cat "$dir/weights/weight.bin" >/dev/null  # warm the page cache for both
  read -r cp_s _ < <(measure "$work/copy.bin" cp "$dir/weights/weight.bin" "$work/copy.bin")
  rm -f "$work/copy.bin"
  read -r c_s c_kb < <(measure "$dir/out" "$anec" compile "$dir/model.mil" -o "$dir/out")
  rm -rf "$dir/out"
  python3 - "$name" "$bytes" "$cp_s" "$c_s" "$c_kb" <<'PY'
import sys
name, size, cp, c, kb = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
params = size / 2 if "fp16" in name else size / 4 if "fp32" in name else size * 2
print(f"| {name} | {params/1e6:.1f}M | {size/2**20:.0f} MiB | {cp:.2f} s | {c:.2f} s | {c/max(cp,0.01):.1f} | {kb*1024/size:.2f} | {kb*1024/(params*2):.2f} | {params/max(c,0.001)/1e6:.0f}M/s |")
PY
}

echo "| model | parameters | weight file | cp | compile | compile / cp | peak RSS / weight file | peak RSS / fp16 weights | parameters/s |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in $layers; do
  dir="$work/fp16_$n"
  [ -f "$dir/model.mil" ] || python3 scripts/bench/stacked_convs.py "$dir" "$n"
  row "fp16 x$n" "$dir"
done
for n in $fp32_layers; do
  dir="$work/fp32_$n"
  [ -f "$dir/model.mil" ] || python3 scripts/bench/stacked_convs.py "$dir" "$n" --dtype fp32
  row "fp32 x$n" "$dir"
done
for n in $palette_layers; do
  dir="$work/pal4_$n"
  [ -f "$dir/model.mil" ] || python3 scripts/bench/stacked_convs.py "$dir" "$n" --palette-bits 4
  row "4-bit palettized x$n" "$dir"
done

echo
echo "| small model | compile (median of 20) |"
echo "|---|---|"
for m in examples/conv/net.plist ../shared/fixtures/mil/real/jafreck+ironmill__test-q_base.mlmodelc.model.mil; do
  [ -f "$m" ] || continue
  t=$(python3 - "$anec" "$m" "$work/small" <<'PY'
import subprocess, sys, time, statistics
anec, model, out = sys.argv[1:4]
ts = []
for _ in range(20):
    t = time.perf_counter(); subprocess.run([anec, "compile", model, "-o", out], check=True, capture_output=True); ts.append(time.perf_counter() - t)
print(f"{statistics.median(ts)*1000:.1f} ms")
PY
)
  echo "| $m | $t |"
done

echo
dir="$work/fp16_24"   # 100.7M parameters
[ -f "$dir/model.mil" ] || python3 scripts/bench/stacked_convs.py "$dir" 24
rm -rf "$work/cache"
read -r cold_s _ < <(measure_once "$anec" compile "$dir/model.mil" -o "$dir/out" --cache-dir "$work/cache")
read -r _ warm_kb < <(measure "$dir/out" "$anec" compile "$dir/model.mil" -o "$dir/out" --cache-dir "$work/cache")
warm_ms=$(python3 - "$anec" "$dir" "$work/cache" <<'PY'
import subprocess, sys, time, statistics
anec, d, cache = sys.argv[1:4]
ts = []
for _ in range(15):
    t = time.perf_counter()
    subprocess.run([anec, "compile", f"{d}/model.mil", "-o", f"{d}/out", "--cache-dir", cache], check=True)
    ts.append(time.perf_counter() - t)
print(f"{statistics.median(ts)*1000:.1f}")
PY
)
echo "compile cache, 100.7M fp16 parameters: cold (compile and store) $cold_s s, warm hit $warm_ms ms (median of 15), peak RSS $((warm_kb / 1024)) MiB"

echo
[ -f "$work/long32k.mil" ] || python3 scripts/bench/long_mil.py "$work/long32k.mil" 32000
read -r l_s l_kb < <(measure "$work/none" "$anec" compile "$work/long32k.mil" --emit anec-ir)
echo "parse and lower a 32,000-statement MIL file (--emit anec-ir): $l_s s, peak RSS $((l_kb / 1024)) MiB"
