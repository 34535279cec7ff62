#!/usr/bin/env python3
"""Summarises the per-instruction source CSVs that the bundle's `STEPS=profile` writes
(`profile.tgz`: `ncu --page source --csv --print-source sass`): per kernel, the share of
each warp-stall reason over all samples, and the executed-instruction mix by opcode with
each opcode's share of the stall samples.

    python3 ncu_stalls.py profile/G1_msm_accumulate-0-source.csv [...]
"""
import collections
import csv
import re
import sys


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def summarise(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = rows[1]  # rows[0] names the kernel
    col = {h: i for i, h in enumerate(header)}
    reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    stalls, samples, executed = collections.Counter(), collections.Counter(), collections.Counter()
    for row in rows[2:]:
        if len(row) < len(header):
            continue
        for r in reasons:
            stalls[r] += number(row[col[r]])
        m = re.match(r"(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", row[col["Source"]].strip())
        if m:
            samples[m.group(2)] += number(row[col["Warp Stall Sampling (All Samples)"]])
            executed[m.group(2)] += number(row[col["Instructions Executed"]])
    total_stalls = sum(stalls.values()) or 1
    total_samples = sum(samples.values()) or 1
    total_executed = sum(executed.values()) or 1
    print(f"== {rows[0][1] if len(rows[0]) > 1 else path}: "
          f"{total_executed:.4g} warp instructions executed")
    print("  stalls: " + ", ".join(f"{r[len('stall_'):]} {100 * v / total_stalls:.1f}%"
                                   for r, v in stalls.most_common(8)))
    for op, v in executed.most_common(12):
        print(f"  {op:20s} {100 * v / total_executed:5.1f}% of instructions, "
              f"{100 * samples[op] / total_samples:5.1f}% of stall samples")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        summarise(p)
