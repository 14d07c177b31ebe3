#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets (swiftc -sanitize=fuzzer,address) and runs each for
# FUZZ_SECONDS from its seed corpus in Tests/Fuzz/corpus (copied: the seeds stay as they
# are). Inputs that once crashed a target are kept in Tests/Fuzz/regressions/<target> and are
# run first, every time. A crash stops the run with the input's path.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${FUZZ_SECONDS:-60}
out=.build/fuzz-bin
mkdir -p "$out"

# The modules under test, instrumented, in a build of their own (testable, so the internal
# parsers of NTTourService can be reached).
swift build --build-path .build/fuzz --target NTTourService -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library 2>&1 \
    | grep -E "error|warning:" && exit 1
lib=.build/fuzz/debug
objects=$(ls $lib/NTTourService.build/*.o $lib/NTTourViewer.build/*.o $lib/NTFloorPlans.build/*.o $lib/NTImagePreviews.build/*.o $lib/NTAPIModel.build/*.o $lib/NTHTTPCore.build/*.o $lib/NTLogging.build/*.o $lib/NTHashing.build/*.o $lib/NTSQLiteDB.build/*.o $lib/NTSQLKit.build/*.o $lib/NTPostgresDB.build/*.o $lib/NTThreadPools.build/*.o $lib/NTOutboundHTTP.build/*.o $lib/NTCurlRuntime.build/*.o $lib/NTObjectStorage.build/*.o)

status=0
for target in request-decoder chunked-body header-parsers json-reader viewer-inputs; do
    source=Tests/Fuzz/$(echo "$target" | sed -E 's/(^|-)([a-z])/\U\2/g')Target.swift
    # The target's function is libFuzzer's entry point here (make test calls it on the corpus,
    # FuzzReplayTests, where five such entry points could not share one module).
    function=$(grep -o 'public func fuzz[A-Za-z]*' "$source" | sed 's/public func //')
    printf '@_cdecl("LLVMFuzzerTestOneInput")\npublic func libFuzzerEntry(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt { %s(data, count) }\n' \
        "$function" > "$out/$target-entry.swift"
    rm -f "$out/$target"
    if ! swiftc -sanitize=fuzzer,address -parse-as-library -module-name "Fuzz${target//-/}" -I $lib/Modules \
            -I Sources/CNTCrypto -I Sources/CNTCurl -I Sources/CNTSQLite -I Sources/CNTLinux -I Sources/CNTTurboJPEG -I Sources/CNTPostgres -I Sources/CNTCairo $(pkg-config --cflags-only-I libpq cairo | sed 's/-I/-Xcc -I/g') "$source" "$out/$target-entry.swift" $objects -lsqlite3 -lcrypto -lcurl -lturbojpeg -lpq -lcairo -o "$out/$target" \
            > "$out/$target.build.log" 2>&1; then
        cat "$out/$target.build.log"
        echo "fuzz $target: does not build"
        exit 1
    fi
    # The linker's notes about ASan's local symbols are noise, not warnings about our code.
    grep -v "Cannot export local symbol" "$out/$target.build.log" || true
    regressions=Tests/Fuzz/regressions/$target
    if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
        "$out/$target" "$regressions"/* > "$out/$target.regressions.log" 2>&1 || { echo "fuzz $target: a regression input crashes again"; status=1; }
    fi
    corpus=$(mktemp -d)
    cp Tests/Fuzz/corpus/"$target"/* "$corpus"/
    if "$out/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$out/$target-" \
            "$corpus" > "$out/$target.log" 2>&1; then
        echo "fuzz $target: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$out/$target.log"), no crash"
    else
        echo "fuzz $target: CRASH; input kept as $(ls -t "$out/$target"-* 2>/dev/null | head -1); log in $out/$target.log"
        status=1
    fi
    rm -rf "$corpus"
done
exit $status
