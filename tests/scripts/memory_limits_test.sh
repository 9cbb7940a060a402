#!/usr/bin/env bash
# usage: memory_limits_test.sh CONVLAB
# Runs that need more memory than there is end with one line, not a kill: each
# case runs CONVLAB under an address-space limit (`ulimit -v`, so no case can
# take the machine down, whatever the binary does) and checks the exit code,
# exactly one stderr line starting with "error:" holding the expected words,
# no crash or core dump, and that it ended within a few seconds (the refusal
# comes before any allocation or long work). One function per case.
set -uo pipefail
convlab=$(realpath "$1") || exit 1
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
max_seconds=15

# expect NAME LIMIT_KIB CODE REGEX -- ARGS...: convlab ARGS under `ulimit -v LIMIT_KIB`.
expect() {
  local name=$1 limit=$2 code=$3 regex=$4
  shift 5
  local t0 t1 rc errors
  rm -f core core.* out err
  t0=$(date +%s.%N)
  (ulimit -v "$limit" && exec timeout 30 "$convlab" "$@") >out 2>err
  rc=$?
  t1=$(date +%s.%N)
  local secs
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  local why=""
  [ "$rc" = "$code" ] || why+="exit $rc, expected $code; "
  [ "$rc" -lt 124 ] || why+="killed or timed out; "
  errors=$(grep -c '^error:' err)
  [ "$errors" = 1 ] || why+="$errors lines start with 'error:'; "
  grep '^error:' err | grep -qE -- "$regex" || why+="the error line does not match /$regex/; "
  ls core core.* >/dev/null 2>&1 && why+="a core dump was written; "
  awk -v s="$secs" -v m="$max_seconds" 'BEGIN { exit !(s > m) }' && why+="took $secs s (more than $max_seconds); "
  if [ -n "$why" ]; then
    echo "FAIL $name: ${why% }"
    echo "     convlab $* (ulimit -v $limit)"
    sed 's/^/     stderr: /' err | head -5
    failures=$((failures + 1))
  else
    echo "ok   $name (${secs} s): $(grep '^error:' err | cut -c1-160)"
  fi
}

# 4 GiB of address space, as a small container or a shared login node gives.
small=4194304

# The binary itself starts under the limit (otherwise every case below fails for that reason).
case_starts_under_the_limit() {
  if (ulimit -v "$small" && exec "$convlab" problem mb1ic1ih8oc1kh1 >/dev/null 2>err); then
    echo "ok   starts_under_the_limit"
  else
    echo "FAIL starts_under_the_limit: convlab problem fails under ulimit -v $small: $(head -1 err)"
    failures=$((failures + 1))
  fi
}

# 25.8 GB of tensors (the problem passes the 2^31-element rules: 2^31-1 groups of one channel).
case_conv_many_groups() {
  expect conv_many_groups "$small" 2 '^error: convlab conv: cpu\.direct on g2147483647.* needs [0-9.]+ GiB of memory but .* available' \
    -- conv g2147483647mb1ic2147483647ih1oc2147483647kh1 --algo cpu.direct
}

# One 46340 x 46341 image: 8 GiB per tensor.
case_conv_wide_image() {
  expect conv_wide_image "$small" 2 '^error: convlab conv: cpu\.direct on mb1ic1ih46340iw46341.* needs [0-9.]+ GiB of memory' \
    -- conv mb1ic1ih46340iw46341oc1kh1 --algo cpu.direct
}

# --check adds the fp64 reference; im2col its column matrix.
case_conv_im2col_check() {
  expect conv_im2col_check "$small" 2 '^error: convlab conv: cpu\.im2col_gemm on mb1ic2147483647i[hw]1.* needs [0-9.]+ GiB of memory' \
    -- conv mb1ic2147483647ih1oc1kh1 --algo cpu.im2col_gemm --check
}

# find's check slice, reference, candidates' buffers: refused before the machine probe.
case_tune_find_wide_image() {
  expect tune_find_wide_image "$small" 2 '^error: find on mb1ic1ih46340iw46341.* fwd needs [0-9.]+ GiB of memory' \
    -- tune mb1ic1ih46340iw46341oc1kh1 --mode find --dir fwd --cache "$work/cache.jsonl"
}

case_layers_wide_image() {
  expect layers_wide_image "$small" 2 '^error: find on mb1ic1ih46340iw46341.* fwd needs [0-9.]+ GiB of memory' \
    -- layers mb1ic1ih46340iw46341oc1kh1 --dir fwd
}

case_demo_large_batch() {
  expect demo_large_batch "$small" 2 '^error: convlab demo: alexnet\.conv1 fwd at batch 1024 needs [0-9.]+ GiB of memory' \
    -- demo --batch 1024
}

# AlexNet at these batches is 10 to 17 GiB per net: the first net cannot be had
# under the limit (the line names the net, the buffer and its size), or the
# memory plan refuses all of them (naming their sizes).
train_alexnet_over_limit() {  # NAME BATCH ARGS...
  local name=$1 batch=$2
  shift 2
  expect "$name" "$small" 2 \
    "^error: (alexnet at batch $batch: .*: cannot allocate [0-9.]+ [GMK]iB \\([0-9]+ bytes\\) of host memory|convlab train: [0-9]+ networks? \\(one per policy\\) of alexnet at batch $batch.* needs? [0-9.]+ GiB of memory)" \
    -- train alexnet --batch "$batch" "$@"
}
case_train_batch_1500() { train_alexnet_over_limit train_batch_1500 1500 --iters 1; }
case_train_batch_1150_two_policies() { train_alexnet_over_limit train_batch_1150_two_policies 1150 --policy 'default;fixed:cpu.direct'; }
case_train_batch_900() { train_alexnet_over_limit train_batch_900 900; }

# The default policies' nets (about 0.9 GiB each at batch 8) fit one by one but not all together.
case_train_default_policies() {
  expect train_default_policies "$small" 2 \
    '^error: convlab train: [0-9]+ networks \(one per policy\) of alexnet at batch 8, the batches \([0-9.]+ MiB\), find.s buffers \([0-9.]+ MiB\) need [0-9.]+ GiB of memory but .*: run fewer policies or a smaller batch$' \
    -- train alexnet
}

# Two nets of 3.5 GiB: the first is allocated (the plan measures it), and the
# plan, which read the available memory (the address-space limit included)
# before that, refuses the pair before the second.
case_train_two_nets_over_limit() {
  expect train_two_nets_over_limit 8388608 2 \
    '^error: convlab train: 2 networks \(one per policy\) of alexnet at batch 256, the batches \([0-9.]+ MiB\) need [0-9.]+ GiB of memory but [0-9.]+ GiB is available' \
    -- train alexnet --batch 256 --iters 1 --warmup 0 --policy 'default;fixed:cpu.direct'
}

case_starts_under_the_limit
case_conv_many_groups
case_conv_wide_image
case_conv_im2col_check
case_tune_find_wide_image
case_layers_wide_image
case_demo_large_batch
case_train_batch_1500
case_train_batch_1150_two_policies
case_train_batch_900
case_train_default_policies
case_train_two_nets_over_limit

if [ "$failures" != 0 ]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "ok: every run over its memory ended with one line"
