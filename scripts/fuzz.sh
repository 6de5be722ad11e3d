#!/usr/bin/env bash
# AFL++ campaigns over the fuzz targets of fuzz/ (docs/fuzzing.md), on the stable toolchain
# through cargo-afl.
#
#   scripts/fuzz.sh setup                 # cargo install cargo-afl; cargo afl config --build
#   scripts/fuzz.sh build                 # the harnesses, into target/afl/release/fuzz-*
#   scripts/fuzz.sh run TARGET SECONDS    # one campaign; findings in fuzz/out/TARGET/default/
#   scripts/fuzz.sh keep TARGET           # the queue (afl-cmin'd for parsers, image) into fuzz/corpus/TARGET.gz
#   scripts/fuzz.sh stats [TARGET...]     # run time, execs, paths, crashes, hangs
#
# A campaign resumes from fuzz/seeds/TARGET plus the kept corpus. Crashes and hangs are
# triaged by hand: each one fixed gets its reproducer in fuzz/regressions/TARGET/, which
# tests/regressions.rs replays on every `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=(request state parsers template image)
BIN=target/afl/release

afl_share() {
    local d
    d=$(ls -d "$HOME"/.local/share/afl.rs/rustc-*/afl.rs-*/afl/share/afl/dictionaries 2>/dev/null | tail -1)
    echo "$d"
}

dicts() {
    local share
    share=$(afl_share)
    case "$1" in
        request | state) echo "-x fuzz/dict/json.dict" ;;
        parsers) echo "-x fuzz/dict/parsers.dict" ;;
        template) echo "-x fuzz/dict/jinja.dict" ;;
        image) echo "-x $share/png.dict -x $share/jpeg.dict -x $share/gif.dict -x $share/webp.dict" ;;
    esac
}

check_target() {
    local t
    for t in "${TARGETS[@]}"; do [[ $t == "$1" ]] && return 0; done
    echo "unknown target '$1' (one of: ${TARGETS[*]})" >&2
    exit 2
}

case "${1:-}" in
    setup)
        cargo install cargo-afl --version 0.18.2 --locked
        cargo afl config --build || echo "(AFL++ runtime already built)"
        ;;
    build)
        cargo afl build --release -p llm-render-fuzz --features afl --bins --target-dir target/afl
        ;;
    run)
        t=${2:?target}; secs=${3:?seconds}
        check_target "$t"
        in=$(mktemp -d)
        cp fuzz/seeds/"$t"/* "$in"/
        [[ -f fuzz/corpus/$t.gz ]] && python3 scripts/fuzz_corpus.py unpack fuzz/corpus/"$t".gz "$in"
        mkdir -p fuzz/out
        # -t: a render past 5 s is a hang to look at; -m none: memory is watched by the
        # target's own limits and the campaign's ulimit below.
        # shellcheck disable=SC2046
        (ulimit -v $((4 * 1024 * 1024)) && \
            AFL_SKIP_CPUFREQ=1 AFL_NO_UI=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
            AFL_AUTORESUME=1 AFL_NO_AFFINITY=1 AFL_FORKSRV_INIT_TMOUT=120000 \
            cargo afl fuzz -i "$in" -o fuzz/out/"$t" $(dicts "$t") -t 5000 -m none -V "$secs" \
                -- "$BIN"/fuzz-"$t")
        rm -rf "$in"
        ;;
    keep)
        t=${2:?target}
        check_target "$t"
        case "$t" in
            parsers | image)
                out=$(mktemp -d)
                AFL_SKIP_CPUFREQ=1 AFL_MAP_SIZE=1048576 PATH="$(dirname "$(afl_share)")/../../bin:$PATH" \
                    "$(dirname "$(afl_share)")/../../bin/afl-cmin.bash" -i fuzz/out/"$t"/default/queue \
                    -o "$out"/min -t 5000 -m none -- "$BIN"/fuzz-"$t" > "$out"/log 2>&1 || { tail -5 "$out"/log; exit 1; }
                python3 scripts/fuzz_corpus.py pack "$out"/min fuzz/corpus/"$t".gz
                rm -rf "$out"
                ;;
            *)
                # The HTTP targets' queue is kept whole: afl-cmin runs each input through
                # afl-showmap, which waits out the timeout on these persistent harnesses
                # (seconds per input). Every queue entry added coverage when it was found,
                # and the whole queue replays in seconds.
                python3 scripts/fuzz_corpus.py pack fuzz/out/"$t"/default/queue fuzz/corpus/"$t".gz
                ;;
        esac
        ;;
    stats)
        shift
        [[ $# -eq 0 ]] && set -- "${TARGETS[@]}"
        printf '%-9s %8s %12s %8s %8s %7s %6s %9s\n' target run_s execs execs/s corpus crashes hangs edges
        for t in "$@"; do
            f=fuzz/out/$t/default/fuzzer_stats
            [[ -f $f ]] || { echo "$t: no campaign"; continue; }
            get() { awk -F' *: *' -v k="$1" '$1 == k {print $2}' "$f"; }
            printf '%-9s %8s %12s %8s %8s %7s %6s %9s\n' "$t" "$(get run_time)" "$(get execs_done)" \
                "$(get execs_per_sec)" "$(get corpus_count)" "$(get saved_crashes)" "$(get saved_hangs)" \
                "$(get edges_found)/$(get total_edges)"
        done
        ;;
    *)
        sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
        exit 2
        ;;
esac
