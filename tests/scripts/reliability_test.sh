#!/usr/bin/env bash
# The hostile cases content fuzzing cannot reach, replayed black-box against the
# built convlab: special files wherever a file is read (@FILE, .npy, cache,
# --images, a results folder), two outputs naming one file, outputs that cannot
# be written (before the work: refused; after it: one line and exit 1), SIGINT
# during a report, repeated directions / problems / policies, HOME unset,
# control bytes in cache lines, bidirectional controls in names, .npy headers
# with repeated keys, non-finite inputs, set-aside cache lines.
#
#   bash tests/scripts/reliability_test.sh BUILD/convlab [CASE...]
#
# Every case is a function; each prints one line ("ok   NAME" or "FAIL NAME:
# why") and the script exits 1 naming the failed cases. Every command runs
# under `timeout` (a hang is a failure), with core dumps off (a crash shows as
# a signal exit status, a failure); a refusal must be exit 2 with exactly one
# line on stderr, starting "error: ". Nothing outside its temporary folder is
# touched: CONVLAB_CACHE points into it.
set -u
convlab=${1:?usage: reliability_test.sh CONVLAB [CASE...]}
shift
convlab=$(cd "$(dirname "$convlab")" && pwd)/$(basename "$convlab")
[ -x "$convlab" ] || { echo "reliability_test.sh: '$convlab' is not executable" >&2; exit 2; }
command -v python3 >/dev/null || { echo "reliability_test.sh: python3 is needed (it writes the .npy inputs)" >&2; exit 2; }

work=$(mktemp -d /tmp/convlab_reliability.XXXXXX)
chmod 755 "$work"  # the unreadable-file case runs as another user when this is root
trap 'chmod -R u+rwX "$work" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work" || exit 2
export CONVLAB_CACHE=$work/default-cache.jsonl
unset XDG_CACHE_HOME
ulimit -c 0
limit=60  # seconds any one command may take; the slowest here takes a few

# ---- helpers ------------------------------------------------------------------

why=""  # the failing case's reason
fail() { why="$*"; return 1; }

# run ARGS...: convlab ARGS under the time limit; sets $rc; output in out.txt / err.txt.
run() {
  timeout -k 5 "$limit" "$convlab" "$@" >out.txt 2>err.txt
  rc=$?
}

# Exit status sanity for every command: no hang, no crash.
sane() {
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then fail "hung (killed after ${limit}s): convlab $*"; return 1; fi
  if [ "$rc" -gt 128 ]; then fail "died of signal $((rc - 128)): convlab $*"; return 1; fi
  return 0
}

# refused FRAGMENT ARGS...: exit 2, exactly one line on stderr, "error: ..." containing FRAGMENT.
refused() {
  local fragment=$1
  shift
  run "$@"
  sane "$@" || return 1
  [ "$rc" -eq 2 ] || { fail "exit $rc, not 2: convlab $* ($(head -c 300 err.txt))"; return 1; }
  local lines
  lines=$(wc -l <err.txt)
  [ "$lines" -eq 1 ] || { fail "$lines lines on stderr, not 1: convlab $*: $(head -c 400 err.txt)"; return 1; }
  grep -q '^error: ' err.txt || { fail "no 'error: ' line: convlab $*: $(cat err.txt)"; return 1; }
  grep -qF -- "$fragment" err.txt || { fail "'$fragment' not in: $(cat err.txt)"; return 1; }
}

# no_control_bytes FILE: nothing but printable text and newlines (no ESC, CR, other C0 bytes, DEL).
no_control_bytes() {
  if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$1"; then fail "raw control bytes in $1: $(od -c "$1" | head -5)"; return 1; fi
}

# npy NAME SHAPE VALUES [HEADER]: a float32 .npy file; VALUES a Python list expression.
npy() {
  python3 - "$@" <<'EOF'
import struct, sys
name, shape, values = sys.argv[1], sys.argv[2], eval(sys.argv[3])
header = sys.argv[4] if len(sys.argv) > 4 else "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(name, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%df" % len(values), *values))
EOF
}

# special NAME KIND: makes NAME a fifo, socket, folder, symlink loop or unreadable file; /dev/zero is used as is.
special() {
  rm -rf "$1"
  case $2 in
    fifo) mkfifo "$1" ;;
    socket) python3 -c "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$1" ;;
    folder) mkdir "$1" ;;
    loop) ln -s "$1" "$1" ;;
    unreadable) echo "mb1ic1ih4oc1kh3" >"$1" && chmod 000 "$1" ;;
  esac
}
kinds=(fifo socket device folder loop unreadable)
declare -A expected=([fifo]="is a FIFO (named pipe), not a regular file" [socket]="is a socket, not a regular file"
                     [device]="is a device, not a regular file" [folder]="is a folder"
                     [loop]="Too many levels of symbolic links" [unreadable]="Permission denied")
# path_of KIND: the path to hand convlab for KIND (made by special, or /dev/zero).
path_of() { [ "$1" = device ] && echo /dev/zero || echo "$work/special_$1"; }
# as_reader KIND ARGS...: refused for KIND; an unreadable file is unreadable only to a user other than root.
refused_kind() {
  local kind=$1
  shift
  if [ "$kind" = unreadable ] && [ "$(id -u)" = 0 ]; then
    command -v setpriv >/dev/null || return 0  # root reads everything; nothing to test without setpriv
    local real=$convlab
    convlab="setpriv --reuid=65534 --regid=65534 --clear-groups $real"
    # shellcheck disable=SC2086
    timeout -k 5 "$limit" $convlab "$@" >out.txt 2>err.txt </dev/null
    rc=$?
    convlab=$real
    sane "$@" || return 1
    [ "$rc" -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "^error: .*${expected[$kind]}" err.txt ||
      { fail "unreadable file: exit $rc: $(cat err.txt)"; return 1; }
    return 0
  fi
  refused "${expected[$kind]}" "$@"
}

# ---- the cases ----------------------------------------------------------------

# Every reader of a user-named file refuses a FIFO (which used to block forever), a socket, a device,
# a folder, a symlink loop and an unreadable file with one line, before opening it.
case_special_files() {
  npy good_labels.npy "(4,)" "[0.0, 1.0, 2.0, 3.0]"
  for kind in "${kinds[@]}"; do
    [ "$kind" = device ] || special "$work/special_$kind" "$kind"
    local p
    p=$(path_of "$kind")
    refused_kind "$kind" problem "@$p" || return 1
    refused_kind "$kind" conv mb1ic1ih4oc1kh3 --algo cpu.direct --x "$p" || return 1
    refused_kind "$kind" cache check "$p" || return 1
    refused_kind "$kind" train tiny --iters 1 --warmup 0 --batch 2 --classes 4 --data npy --images "$p" \
      --labels good_labels.npy || return 1
  done
  # The hangs of old: tune and layers reading a FIFO as @FILE or as a cache.
  special fifo fifo
  refused "is a FIFO" tune @fifo --mode get || return 1
  refused "is a FIFO" layers @fifo || return 1
  refused "is a FIFO" tune mb1ic1ih4oc1kh3 --mode get --cache fifo || return 1
  refused "is a FIFO" layers mb1ic1ih4oc1kh3 --cache fifo || return 1
  # A results folder whose train.json is a FIFO.
  mkdir -p results && special results/train.json fifo
  refused "is a FIFO" html results || return 1
}

# Two outputs naming one file (through any spelling) are refused before the work; so are outputs
# that cannot be written: a read-only file, a missing folder, a FIFO, the page over its own data.
case_output_paths() {
  mkdir -p sub && : >X && ln -sf X L
  local tiny=(train tiny --iters 1 --warmup 0 --batch 2 --classes 4 --policy default)
  refused "--json 'X' and --md 'X' name the same file" "${tiny[@]}" --json X --md X || return 1
  refused "name the same file" "${tiny[@]}" --json X --csv ./X || return 1
  refused "name the same file" "${tiny[@]}" --json sub/../X --md X || return 1
  refused "name the same file" layers mb1ic1ih4oc1kh3 --json X --csv L || return 1
  refused "name the same file" "${tiny[@]}" --json c.jsonl --policy "cache:./c.jsonl" || return 1
  : >ro.json && chmod 444 ro.json
  refused "is read-only" "${tiny[@]}" --json ro.json || return 1
  refused "does not exist" "${tiny[@]}" --md no/such/folder/r.md || return 1
  special out_fifo fifo
  refused "is not a regular file" layers mb1ic1ih4oc1kh3 --json out_fifo || return 1
  mkdir -p page && echo '{}' >page/train.json
  refused "is train.json of the folder it draws" html page --out page/train.json || return 1
}

# A write that fails after the work -- a file-size limit, a full device -- is one line naming the file
# and the system's reason, exit 1 (the work ran; its results are lost), not a silent exit.
case_write_failure_after_work() {
  ( ulimit -f 1; exec timeout -k 5 "$limit" "$convlab" tune mb1ic2ih6oc2oh6kh3ph1 --dir fwd --mode find --quiet \
      --max-seconds 0.01 --cache big.jsonl >out.txt 2>err.txt )
  rc=$?
  sane tune under ulimit -f || return 1
  [ "$rc" -eq 1 ] || { fail "tune with a cache it cannot write: exit $rc, not 1: $(cat err.txt)"; return 1; }
  grep -q "^error: cannot write 'big.jsonl': File too large$" err.txt || { fail "tune: $(cat err.txt)"; return 1; }
  [ "$(wc -l <err.txt)" -eq 1 ] || { fail "tune: not one line: $(cat err.txt)"; return 1; }
  if [ -e /dev/full ]; then
    timeout -k 5 "$limit" "$convlab" problem alexnet >/dev/full 2>err.txt
    rc=$?
    sane problem to /dev/full || return 1
    [ "$rc" -eq 1 ] && grep -q "^error: cannot write the standard output: No space left on device$" err.txt ||
      { fail "stdout on a full device: exit $rc: $(cat err.txt)"; return 1; }
  fi
}

# report writes its folder as a whole: an older run's layers.* go, every file carries the run id,
# `html` leaves out a file of another run, and SIGINT in the middle leaves the previous folder intact.
case_report_folder() {
  local report=(report --net tiny --batch 2 --warmup 0 --classes 4 --threads 1 --policy default --no-compare)
  mkdir -p D && echo '{"tool": "convlab layers"}' >D/layers.json && echo old >D/layers.csv
  run "${report[@]}" --iters 1 --out D
  sane report || return 1
  [ "$rc" -eq 0 ] || { fail "report: exit $rc: $(tail -3 err.txt)"; return 1; }
  [ ! -e D/layers.json ] && [ ! -e D/layers.csv ] || { fail "an earlier run's layers.* kept beside the new training"; return 1; }
  grep -q '"run_id": "' D/train.json || { fail "train.json has no run id"; return 1; }
  # A layers.json of another command: not drawn beside this training, with a note; drawn on request.
  run layers mb1ic2ih6oc2oh6kh3ph1 --dir fwd --threads 1 --max-seconds 0.01 --json D/layers.json
  sane layers || return 1
  run html D
  sane html || return 1
  [ "$rc" -eq 0 ] && grep -q "^note: convlab html: layers.json is from another run" err.txt ||
    { fail "html drew a mixed folder: exit $rc: $(cat err.txt)"; return 1; }
  grep -q 'id="chart-roofline' D/report.html && { fail "html drew the other run's layers"; return 1; }
  run html D --mixed-runs
  [ "$rc" -eq 0 ] && grep -q "drawn beside it (--mixed-runs)" D/report.html || { fail "--mixed-runs: exit $rc"; return 1; }
  rm -f D/layers.json
  local before
  before=$(cd D && ls -A | sort && md5sum -- *)
  # SIGINT in the middle of the training half. In a script a background job ignores SIGINT:
  # env gives the run the terminal's default.
  env --default-signal=INT "$convlab" "${report[@]}" --iters 100000 --out D >out.txt 2>err.txt &
  local pid=$! waited=0
  until grep -q "training tiny" err.txt 2>/dev/null; do
    sleep 0.2
    waited=$((waited + 1))
    if [ $waited -gt 300 ] || ! kill -0 $pid 2>/dev/null; then
      kill -KILL $pid 2>/dev/null
      fail "the long report never started training: $(tail -3 err.txt)"
      return 1
    fi
  done
  sleep 0.5
  kill -INT $pid
  local i=0
  while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  if kill -0 $pid 2>/dev/null; then
    kill -KILL $pid
    wait $pid 2>/dev/null
    fail "report did not stop on SIGINT"
    return 1
  fi
  wait $pid
  rc=$?
  [ "$rc" -eq 130 ] || { fail "report after SIGINT: exit $rc, not 130: $(tail -2 err.txt)"; return 1; }
  [ "$(cd D && ls -A | sort && md5sum -- *)" = "$before" ] ||
    { fail "SIGINT changed the previous folder: $(ls -A D)"; return 1; }
}

# A direction, a problem or a policy given twice runs once, with a note on stderr.
case_duplicates() {
  run tune mb1ic2ih6oc2oh6kh3ph1 --dir fwd,fwd --mode get --quiet
  sane tune || return 1
  [ "$rc" -eq 0 ] && grep -q "1 (layer, direction) pair(s)" out.txt && grep -q "^note: --dir 'fwd,fwd' names fwd more than once" err.txt ||
    { fail "tune --dir fwd,fwd: exit $rc: $(head -1 out.txt) / $(cat err.txt)"; return 1; }
  run problem mb1ic2ih6oc2oh6kh3ph1 mb1_ic2_ih6_oc2_oh6_kh3_ph1
  [ "$rc" -eq 0 ] && [ "$(wc -l <out.txt)" -eq 1 ] && grep -q "x2" out.txt && grep -q "^note: 1 repeated entry merged" err.txt ||
    { fail "problem P P: exit $rc: $(cat out.txt err.txt)"; return 1; }
  run train tiny --iters 1 --warmup 0 --batch 2 --classes 4 --threads 1 --policy 'default;default' --json t.json
  sane train || return 1
  [ "$rc" -eq 0 ] && grep -q "^note: convlab train: policy 'default' given more than once: trained once" err.txt ||
    { fail "train --policy 'default;default': exit $rc: $(grep -v '^  ' err.txt)"; return 1; }
  [ "$(grep -c '"policy": "default"' t.json)" -eq 1 ] || { fail "the repeated policy was trained twice"; return 1; }
}

# With HOME unset (or missing) there is no default cache: never one in the current folder, HOME never
# created; a policy that needs it is refused in one line, tune says its probe was not stored.
case_no_home() {
  mkdir -p cwd && cd cwd || return 1
  env -u HOME -u CONVLAB_CACHE -u XDG_CACHE_HOME timeout -k 5 "$limit" "$convlab" train tiny --iters 1 --warmup 0 \
    --batch 2 --classes 4 --policy get >../out.txt 2>../err.txt
  rc=$?
  cd .. || return 1
  [ "$rc" -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "^error: .*no default autotune cache: HOME is not set" err.txt ||
    { fail "train --policy get without HOME: exit $rc: $(cat err.txt)"; return 1; }
  cd cwd || return 1
  env -u CONVLAB_CACHE -u XDG_CACHE_HOME HOME="$work/nohome" timeout -k 5 "$limit" "$convlab" tune mb1ic2ih6oc2oh6kh3ph1 \
    --dir fwd --mode get --quiet >../out.txt 2>../err.txt
  rc=$?
  cd .. || return 1
  sane tune || return 1
  [ "$rc" -eq 0 ] && grep -q "no default autotune cache: HOME '$work/nohome' is not an existing folder" err.txt &&
    grep -q "nothing will be kept" err.txt ||
    { fail "tune with a missing HOME: exit $rc: $(cat out.txt err.txt)"; return 1; }
  [ ! -e nohome ] || { fail "HOME=<missing> was created"; return 1; }
  [ -z "$(ls -A cwd)" ] || { fail "a cache landed in the current folder: $(ls -A cwd)"; return 1; }
}

# Cache lines are shared between machines and users: whatever bytes they hold, check and show print
# them escaped, one line each.
case_cache_control_bytes() {
  # The fuzzer's finding: a result status holding newlines, escape-like and invalid bytes.
  printf '%s\n' '{"format":1,"problem":"mb1ic1ih4oc1oh2kh3","dir":"fwd","dtype":"f32","device":"d","version":"0.1.0","tuned_at":1,"workspace_limit":null,"results":[{"algo":"cpu.direct","status":"ok\n\u001b[2J\r\u009b31m\u202e","time":1e-06,"spread":0.1,"reps":3,"workspace":0,"max_rel_error":1e-07,"err_ratio":0.01,"deterministic":true,"note":""}]}' >ctl.jsonl
  run cache check ctl.jsonl
  sane cache check || return 1
  [ "$rc" -eq 1 ] || { fail "cache check: exit $rc"; return 1; }
  no_control_bytes out.txt || return 1
  no_control_bytes err.txt || return 1
  [ "$(wc -l <out.txt)" -eq 2 ] && grep -qF "unknown status 'ok\\x0a\\x1b[2J\\x0d\\xc2\\x9b31m\\u202e'" out.txt ||
    { fail "cache check: $(cat out.txt)"; return 1; }
  # A readable entry whose fields hold control bytes: show prints it escaped on one line.
  printf '%s\n' '{"format":1,"problem":"mb1ic1ih4oc1oh2kh3\u001b[31m","dir":"fwd","dtype":"f32","device":"d\nx","version":"0.1.0","tuned_at":1,"workspace_limit":null,"results":[{"algo":"cpu.direct\u001b]0;t\u0007","status":"ok","time":1e-06,"spread":0.1,"reps":3,"workspace":0,"max_rel_error":1e-07,"err_ratio":0.01,"deterministic":true,"note":"\u001b[2J"}]}' >show.jsonl
  run cache show show.jsonl
  sane cache show || return 1
  no_control_bytes out.txt || return 1
  no_control_bytes err.txt || return 1
  [ "$(wc -l <out.txt)" -eq 1 ] || { fail "cache show: $(wc -l <out.txt) lines for one entry"; return 1; }
}

# An unreadable cache line set aside is kept, every time, and the warning says where.
case_cache_set_aside() {
  local entry='{"format":1,"problem":"mb1ic1ih4oc1oh2kh3","dir":"DIR","dtype":"f32","device":"d","version":"0.1.0","tuned_at":1,"workspace_limit":null,"results":[{"algo":"cpu.direct","status":"ok","time":1e-06,"spread":0.1,"reps":3,"workspace":0,"max_rel_error":1e-07,"err_ratio":0.01,"deterministic":true,"note":""}]}'
  printf '%s\nfirst broken line\n' "${entry/DIR/fwd}" >a.jsonl
  printf '%s\n' "${entry/DIR/bwd-data}" >b.jsonl
  run cache merge a.jsonl b.jsonl -o a.jsonl
  sane cache merge || return 1
  [ "$rc" -eq 0 ] && grep -q "appended to 'a.jsonl.bad' by this merge" err.txt && grep -qx 'first broken line' a.jsonl.bad ||
    { fail "merge -o a: exit $rc: $(cat err.txt) / $(cat a.jsonl.bad 2>&1)"; return 1; }
  echo 'second broken line' >>a.jsonl
  run cache merge a.jsonl b.jsonl -o a.jsonl
  grep -qx 'first broken line' a.jsonl.bad && grep -qx 'second broken line' a.jsonl.bad ||
    { fail "a second corruption replaced the first: $(cat a.jsonl.bad)"; return 1; }
  [ "$(grep -c '^# .* set aside by cache merge: 1 unreadable line of .a.jsonl.$' a.jsonl.bad)" -eq 2 ] ||
    { fail "no header per set-aside: $(cat a.jsonl.bad)"; return 1; }
  grep -q 'broken' a.jsonl && { fail "the unreadable lines are still in the cache"; return 1; }
  [ "$(wc -l <a.jsonl)" -eq 2 ] || { fail "merge lost an entry: $(cat a.jsonl)"; return 1; }
}

# Names: a right-to-left override or only invisible characters are refused; messages never carry one raw.
case_names() {
  refused "bidirectional controls" problem $'mb1ic1ih4oc1kh3n"conv\xe2\x80\xae2vnoc"' || return 1
  LC_ALL=C grep -q $'\xe2\x80\xae' err.txt && { fail "a raw U+202E in the message"; return 1; }
  refused "no visible character" problem $'mb1ic1ih4oc1kh3n"\xe2\x80\x8b\xe2\x80\x8d"' || return 1
  refused "is a network (5 convolution layers), not one layer or problem" conv alexnet --algo cpu.direct || return 1
}

# .npy inputs: a header naming a key twice (NumPy would keep the last), non-finite values (the input
# is at fault, not the algorithm --check would blame).
case_npy_inputs() {
  npy dup.npy "" "[1.0] * 16" "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 4, 4), 'shape': (2, 8), }"
  refused "header names 'shape' twice" conv mb1ic1ih4oc1kh3 --algo cpu.direct --x dup.npy || return 1
  npy x_nan.npy "(1, 1, 4, 4)" "[float('nan')] + [1.0] * 15"
  refused "--x 'x_nan.npy' holds 1 non-finite value (the first, element 0, is nan)" \
    conv mb1ic1ih4oc1kh3 --algo cpu.direct --x x_nan.npy --check || return 1
  npy w_inf.npy "(1, 1, 3, 3)" "[1.0] * 8 + [float('-inf')]"
  refused "holds 1 non-finite value (the first, element 8, is -inf)" \
    conv mb1ic1ih4oc1kh3 --algo cpu.direct --w w_inf.npy || return 1
}

# ---- driver -------------------------------------------------------------------

all=(special_files output_paths write_failure_after_work report_folder duplicates no_home cache_control_bytes
     cache_set_aside names npy_inputs)
[ $# -gt 0 ] && all=("$@")
failed=()
for c in "${all[@]}"; do
  why=""
  start=$SECONDS
  if "case_$c"; then
    printf 'ok   %-26s (%ds)\n' "$c" $((SECONDS - start))
  else
    printf 'FAIL %-26s %s\n' "$c" "$why"
    failed+=("$c")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "reliability_test.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "reliability_test.sh: all ${#all[@]} cases passed"
