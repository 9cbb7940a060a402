#!/usr/bin/env bash
# usage: bench_cli_test.sh BENCH_CONV BENCH_GEMM BENCH_FFT BENCH_UKERNEL
# bench_conv is the one convolution benchmark for both devices: its names are conv/<layer>/<dir>/<algorithm>,
# --family keeps a family and the vendor peers of its device, an unsupported case is a skipped entry with its
# reason, and --device=cuda without a device is one line and exit 2 (the CLI's convention). bench_gemm and
# bench_fft hold only kernel-level entries.
set -uo pipefail
conv=$1 gemm=$2 fft=$3 ukernel=$4
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
has_gpu() { command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; }

# Every CPU algorithm but the reference, on every AlexNet layer and direction; CUDA entries only when asked.
"$conv" --benchmark_list_tests > "$work/list" 2> "$work/list.err" || fail "--benchmark_list_tests exit $?"
grep -qx 'conv/alexnet.conv3/fwd/cpu.winograd_f4x3/real_time' "$work/list" || fail "no conv/alexnet.conv3/fwd/cpu.winograd_f4x3"
grep -q 'cpu.reference' "$work/list" && fail "cpu.reference is listed"
grep -qE '/(cuda|cudnn)\.' "$work/list" && fail "CUDA entries without --device"
grep -qvE '^conv/alexnet\.conv[1-5]/(fwd|bwd-data|bwd-filter)/(cpu|onednn)\.[a-z0-9_]+/real_time$' "$work/list" \
  && fail "a name outside conv/<layer>/<dir>/<cpu algorithm>/real_time: $(grep -vE '^conv/alexnet\.conv[1-5]/(fwd|bwd-data|bwd-filter)/(cpu|onednn)\.[a-z0-9_]+/real_time$' "$work/list" | head -1)"

# --family: the family and the vendor peers of its device, nothing else.
"$conv" --family=winograd --benchmark_list_tests > "$work/family" 2>&1 || fail "--family=winograd exit $?"
grep -q '/cpu.winograd_f6x3/' "$work/family" || fail "--family=winograd lacks cpu.winograd_f6x3"
grep -vE '/(cpu\.winograd_|onednn\.)' "$work/family" | grep -q '^conv/' && fail "--family=winograd keeps $(grep -vE '/(cpu\.winograd_|onednn\.)' "$work/family" | head -1)"

# A short run: counters, the label, a skipped unsupported case with its reason, the closing table.
"$conv" --family=winograd --batch=1 --reps=1 --benchmark_min_time=0.01 \
  --benchmark_filter='alexnet.conv(1|5)/fwd/' > "$work/run" 2> "$work/run.err" || fail "short run exit $?"
grep -E '^conv/alexnet.conv5/fwd/cpu.winograd_f4x3/real_time .*GFLOP/s=' "$work/run" | grep -q 'workspace=' \
  || fail "no GFLOP/s and workspace counters for cpu.winograd_f4x3"
# A counter's value carries its unit once: "GFLOP/s=48.07", never "GFLOP/s=48.07/s" or "%peak=16.1/s".
grep -E '(GFLOP/s|%peak)=[0-9.]+[kMGT]?/s' "$work/run" && fail "a counter prints its unit twice: $(grep -oE '(GFLOP/s|%peak)=[0-9.]+[kMGT]?/s' "$work/run" | head -1)"
grep -E '^conv/alexnet.conv1/fwd/cpu.winograd_f4x3/real_time .*ERROR OCCURRED' "$work/run" | grep -q '3x3\|3×3' \
  || fail "cpu.winograd_f4x3 on conv1 (11x11 filter) is not reported unsupported with its reason"
grep -q '^layer/dir .*cpu.winograd_f4x3.*cpu family/peer' "$work/run" || fail "no closing table with family/peer"
grep -qE '^alexnet.conv5/fwd .*\*' "$work/run" || fail "the table marks no fastest algorithm for conv5"
grep -qiE '^(error|note)' "$work/run.err" && fail "stderr: $(grep -iE '^(error|note)' "$work/run.err")"
# JSON on stdout stays JSON (no table after it).
if command -v python3 >/dev/null; then
  "$conv" --batch=1 --reps=1 --benchmark_min_time=0.01 --benchmark_filter='alexnet.conv5/fwd/cpu.direct' \
    --benchmark_format=json > "$work/run.json" 2>/dev/null || fail "json run exit $?"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["benchmarks"][0]["run_name"].startswith("conv/alexnet.conv5/fwd/cpu.direct")' \
    "$work/run.json" || fail "--benchmark_format=json is not one JSON document naming conv/alexnet.conv5/fwd/cpu.direct"
fi

# --stages: where each CPU entry's time goes, stage by stage, against the peak or the bandwidth, and as CSV.
"$conv" --family=winograd --batch=1 --reps=1 --benchmark_min_time=0.01 --benchmark_filter='alexnet.conv5/fwd/' \
  --stages_csv="$work/stages.csv" > "$work/stages" 2> "$work/stages.err" || fail "--stages run exit $?"
grep -q '^where the time goes, per stage' "$work/stages" || fail "--stages prints no stage table"
for st in 'input transform' 'batched GEMM' 'output transform'; do
  grep -E "^alexnet.conv5/fwd +cpu.winograd_f4x3 +$st " "$work/stages" | grep -qE '(peak|bandwidth) [0-9]+%' \
    || fail "--stages: no '$st' row for cpu.winograd_f4x3 with its limit"
done
grep -qE '^alexnet.conv5/fwd +onednn.direct +whole run ' "$work/stages" || fail "--stages: oneDNN has no whole-run row"
head -1 "$work/stages.csv" | grep -qx 'layer,direction,algorithm,stage,kind,ms,share,gflops,pct_peak,gbs,pct_bandwidth' \
  || fail "--stages_csv header: $(head -1 "$work/stages.csv")"
grep -q '^alexnet.conv5,fwd,cpu.winograd_f4x3,batched GEMM,compute,' "$work/stages.csv" || fail "--stages_csv lacks the GEMM row"
[ -e "$work/stages.csv.tmp" ] && fail "--stages_csv left its temp file"

# One line and exit 2, as the convlab CLI: bad flags, an unknown family, --device=cuda without a device.
one_line_exit2() {
  local what=$1; shift
  "$conv" "$@" > "$work/out" 2> "$work/err"
  local rc=$?
  [ $rc = 2 ] || fail "$what: exit $rc, want 2"
  [ "$(wc -l < "$work/err")" = 1 ] || fail "$what: stderr is not one line: $(cat "$work/err")"
}
one_line_exit2 "--device=gpu" --device=gpu
one_line_exit2 "--family=nosuch" --family=nosuch
one_line_exit2 "--batch=x" --batch=x
if has_gpu; then
  "$conv" --device=cuda --benchmark_list_tests > "$work/cuda" 2>&1 || fail "--device=cuda exit $?"
  grep -q '^conv/alexnet.conv3/fwd/cuda.winograd_f4x3/manual_time$' "$work/cuda" || fail "no CUDA entries with a GPU"
else
  one_line_exit2 "--device=cuda without a device" --device=cuda --benchmark_list_tests
  grep -q 'no CUDA device (' "$work/err" || fail "--device=cuda without a device does not say so: $(cat "$work/err")"
  "$conv" --device=all --benchmark_list_tests > "$work/all" 2> "$work/all.err" || fail "--device=all without a device exit $?"
  [ "$(wc -l < "$work/all.err")" = 1 ] && grep -q 'no CUDA device (.*skipped' "$work/all.err" \
    || fail "--device=all without a device must run the CPU half and say in one line why not the GPU's: $(cat "$work/all.err")"
  cmp -s "$work/all" "$work/list" || fail "--device=all without a device lists other entries than the CPU's"
fi

# --model=CARD: modelled times without a GPU, labelled so, selected by --benchmark_filter; measuring flags refused.
one_line_exit2 "--model without --device=cuda" --model=h100
one_line_exit2 "--model=a100" --device=cuda --model=a100
one_line_exit2 "--model_json without --model" --device=cuda --model_json="$work/m.json"
one_line_exit2 "--model with --stages" --device=cuda --model=h100 --stages
one_line_exit2 "--model with a bad regex" --device=cuda --model=h100 --benchmark_filter='('
if [ -x "$(dirname "$conv")/simt_counts" ]; then
  "$conv" --device=cuda --model=h200 --batch=2 --benchmark_filter='alexnet.conv5/fwd/cuda\.(implicit_gemm|im2col_cublas)$' \
    --model_json="$work/m.json" > "$work/model" 2> "$work/model.err" || fail "--model run exit $?"
  grep -q '^bench_conv: MODELLED times on NVIDIA H200' "$work/model" || fail "--model does not say MODELLED first"
  grep -qE '^conv/alexnet.conv5/fwd/cuda.implicit_gemm/modelled +[0-9.]+ ms ' "$work/model" || fail "--model: no modelled row"
  grep -qE '^conv/alexnet.conv5/fwd/cuda.im2col_cublas +not modelled: ' "$work/model" || fail "--model: cuBLAS not said unmodelled"
  grep -qE '/(cudnn\.|cuda\.direct|cuda\.winograd)' "$work/model" && fail "--model modelled entries the filter left out"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s={r["algorithm"]: r["status"] for r in d["rows"]}; assert s == {"cuda.implicit_gemm": "modelled", "cuda.im2col_cublas": "not modelled"}, s' \
    "$work/m.json" || fail "--model_json rows: $(head -c 300 "$work/m.json")"
fi

# The kernel-level benches hold no whole-convolution entries (those are bench_conv's).
"$gemm" --benchmark_list_tests > "$work/gemm" 2>&1 || fail "bench_gemm exit $?"
grep -q '^gemm/alexnet.conv3/fwd/dnnl' "$work/gemm" || grep -q '^gemm/alexnet.conv3/fwd/openblas' "$work/gemm" \
  || fail "bench_gemm lists no gemm/ entries"
grep -q '^conv/' "$work/gemm" && fail "bench_gemm still lists whole convolutions"
"$fft" --benchmark_list_tests > "$work/fft" 2>&1 || fail "bench_fft exit $?"
grep -q '^fft/r2c/.*/fftw/' "$work/fft" || fail "bench_fft lists no fft/ entries"
grep -q '^conv/' "$work/fft" && fail "bench_fft still lists whole convolutions"

# bench_ukernel: each family's innermost kernel with GFLOP/s and %peak (of a CPU-time peak), every ISA's
# SGEMM micro-kernel the CPU allows (portable always).
"$ukernel" --benchmark_min_time=0.01 > "$work/uk" 2> "$work/uk.err" || fail "bench_ukernel exit $?"
for e in 'ukernel/sgemm/portable' 'ukernel/fft_cgemm/' 'ukernel/fft_r2c/32x32/'; do
  grep -E "^$e" "$work/uk" | grep -q '%peak=' || fail "bench_ukernel: no $e entry with %peak"
done
grep -q '^ukernel/sgemm/.*sgemm_ukernel_' "$work/uk" || fail "bench_ukernel: the sgemm entries do not name their micro-kernel"

[ $fails = 0 ] && echo "ok" || exit 1
