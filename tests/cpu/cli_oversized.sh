#!/usr/bin/env bash
# Oversized shapes through the real binary (issue 16, finding 1 and 7): sizes whose products pass 2^63 are
# refused with one line and exit 2 by run and tune, range parsing refuses overflow, tune estimates memory
# before allocating, and the CPU estimate counts host copies and the fp64 reference.
# Usage: cli_oversized.sh ATTNBENCH SOURCE_DIR
set -u
bin=$1
source "$2/tests/cpu/expect_lib.sh"  # also makes and enters the scratch folder $work

huge=(--batch=1048576 --heads=1048576 --seq_len=262144 --head_dim=64)
expect_exit 2 "1.845e+19 elements (32.00 EiB in fp16)" "$bin" --backend=cpu "${huge[@]}"
expect_exit 2 "1.845e+19 elements" "$bin" "${huge[@]}"
expect_exit 2 "1.845e+19 elements" "$bin" tune --backend=cpu "${huge[@]}" --cache=c.json
expect_exit 2 "1.845e+19 elements" "$bin" tune "${huge[@]}" --cache=c.json
[[ ! -e c.json ]] && ok || bad "a refused tune left c.json"
# A range whose next value would pass 2^63: the range ends at its last value, the shape is then refused.
expect_exit 2 "B=1099511627776" "$bin" --backend=cpu --batch=1099511627776:1099511627776:*16777216
expect_exit 2 "B=1099511627776" "$bin" --backend=cpu --batch=1:1099511627776:*1099511627776 --heads=1048576
expect_exit 2 "is too large" "$bin" --backend=cpu --batch=99999999999999999999
# Eight axes of many values: the point count is refused, not wrapped.
many=$(seq -s, 1 200)
expect_exit 2 "the limit is 100000" "$bin" --backend=cpu --batch="$many" --heads="$many" --seq_len="$many" --head_dim="$many"
# tune estimates memory before allocating, as run does (was std::bad_alloc mid-tune).
expect_exit 2 "refused before allocating" "$bin" tune --backend=cpu --batch=1024 --heads=64 --seq_len=8192 --head_dim=128 --strategies=fused --cache=c.json
# The exact commands, with the backend chosen as a user would (auto): still one line, no notice first.
expect_exit 2 "refused before allocating" "$bin" tune --batch=1024 --heads=64 --seq_len=8192 --head_dim=128 --strategies=fused --cache=c.json
expect_exit 2 "refused before allocating" "$bin" --batch=1024 --heads=64 --seq_len=8192 --head_dim=128 --strategies=fused
expect_exit 2 "refused before allocating" "$bin" tune --backend=cpu --quiet --batch=1 --heads=1 --seq_len=4096 --head_dim=64 --max_memory=1MiB --cache=c.json
[[ ! -e c.json ]] && ok || bad "a refused tune left c.json"
# The CPU estimate counts the host copies and the fp64 reference: B=64 H=1 S=256 D=64 is E=2^20 elements;
# its buffers alone take 12 MiB (2+2+2+2 bytes per element and the fp32 reference), 26 MiB with the host
# copies (6 per element) and the fp64 reference (8): 20 MiB is refused with --verify, enough without.
shape=(--batch=64 --heads=1 --seq_len=256 --head_dim=64 --strategies=fused)
expect_exit 2 "refused before allocating" "$bin" --backend=cpu --quiet --verify "${shape[@]}" --max_memory=20MiB
"$bin" --backend=cpu --quiet "${shape[@]}" --max_memory=20MiB --max_samples=1 --warmup=0 >stdout.txt 2>stderr.txt && ok ||
  bad "without --verify 20MiB should hold E=2^20 (rc=$?)"
finish
