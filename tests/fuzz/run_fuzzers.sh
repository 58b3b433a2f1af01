#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for SECONDS over a copy of its
# committed corpus (tests/fuzz/corpus/<target>/), seeded also with the hostile files of tests/hostile/corpus/.
# Crashes land in BUILD_DIR/fuzz-artifacts/<target>/ and make the script fail. With QS_FUZZ_MERGE=1 the inputs
# that reached new code are merged back into tests/fuzz/corpus/<target>/ (only those: -merge=1 keeps the
# smallest set with the same coverage), to be committed, so the corpus grows with every run that finds more.
#   usage: [QS_FUZZ_MERGE=1] tests/fuzz/run_fuzzers.sh [BUILD_DIR] [SECONDS] [TARGET...]
#   default: build-fuzz 20 npy csv safetensors gguf json session tensor_text
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build-fuzz}"
seconds="${2:-20}"
shift $(( $# > 2 ? 2 : $# )) || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(npy csv safetensors gguf json session tensor_text)

cmake -S "$repo" -B "$build" -DQS_FUZZ=ON -DQS_BUILD_GUI=OFF \
      -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/#/fuzz_}"

failed=()
for target in "${targets[@]}"; do
    corpus="$build/fuzz-corpus/$target"
    artifacts="$build/fuzz-artifacts/$target"
    mkdir -p "$corpus" "$artifacts"
    cp -n "$repo/tests/fuzz/corpus/$target/"* "$corpus/" 2>/dev/null || true
    dict=()
    [ -f "$repo/tests/fuzz/$target.dict" ] && dict=(-dict="$repo/tests/fuzz/$target.dict")
    echo "== fuzz_$target for ${seconds}s"
    # No input of 4 KiB may need a 64 MiB allocation: -malloc_limit_mb reports a parser that trusts a
    # length field and allocates for it, instead of letting it pass because the machine had the memory.
    # New inputs go to the first folder only: the committed and hostile ones are read, never written.
    if ! "$build/bin/fuzz_$target" "$corpus" "$repo/tests/hostile/corpus" "${dict[@]}" -max_len=4096 -max_total_time="$seconds" -timeout=10 \
            -rss_limit_mb=2048 -malloc_limit_mb=64 -print_final_stats=1 -artifact_prefix="$artifacts/" \
            2> "$build/fuzz-$target.log"; then
        failed+=("$target")
        tail -n 40 "$build/fuzz-$target.log"
    else
        grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE" "$build/fuzz-$target.log" || true
        if [ "${QS_FUZZ_MERGE:-0}" = 1 ]; then
            "$build/bin/fuzz_$target" -merge=1 "$repo/tests/fuzz/corpus/$target" "$corpus" 2> "$build/fuzz-$target-merge.log"
            grep -E "MERGE-OUTER: [0-9]+ new files" "$build/fuzz-$target-merge.log" || true
        fi
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzzing found problems in: ${failed[*]} (inputs in $build/fuzz-artifacts/)" >&2
    exit 1
fi
echo "all fuzz targets ran clean"
