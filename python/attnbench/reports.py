"""attnbench.report/1 files read in Python, with no binary: each report's rows flattened exactly as
`attnbench report FILE --format=json` flattens them (docs/report-format.md, "Flat rows"; the binary's
src/report/flat_rows.cpp, report_view.cpp and run/result_row_json.cpp), with the binary's own label, match key
and cache key (src/core/problem_axes.cpp). tests/cli/test_python_package.py checks that the two agree on the
committed reports and on fresh ones of every kind.

    from attnbench.reports import read_flat
    doc = read_flat("out.json")        # {"schema": "attnbench.rows/1", "tool", "device", "devices", "settings", "rows"}

A report of any version reads (problems of reports before the inference axes get their kv_heads and q_len, as the
binary fills them in); a file that is not JSON, not a report, or has a field of the wrong type raises
ReportError naming the file and the field.
"""
import json
import math

REPORT_SCHEMA = "attnbench.report/1"
ROWS_SCHEMA = "attnbench.rows/1"
STATUSES = ("ok", "unsupported", "incorrect", "failed")

# The problem axes in the binary's table order (label, key and CSV order): name, type, required (the axis has a
# default in the binary, so a report's problem must give it), the axis another one stands in for when given.
AXES = (
    ("batch", int, True, None),
    ("heads", int, True, None),
    ("kv_heads", int, False, None),
    ("seq_len", int, True, None),
    ("q_len", int, False, None),
    ("kv_lens", str, False, "seq_len"),
    ("head_dim", int, True, None),
    ("pages", int, True, None),
    ("page_size", int, False, "pages"),
    ("kv_layout", str, True, None),
    ("dtype", str, True, None),
    ("causal", bool, True, None),
    ("window", int, False, None),   # the variants (docs/variants.md): absent when the problem has none
    ("softcap", int, False, None),
    ("sinks", bool, False, None),
    ("head_dim_v", int, False, None),  # V's and O's width: absent when it is head_dim
    ("q_lens", str, False, None),      # a mixed batch's per-sequence query counts (with q_lens_values)
    ("kv_dtype", str, False, None),    # an FP8 K/V cache (fp8_e4m3; absent: K/V in the dtype)
    ("kv_scale", str, False, None),    # and its scales' granularity (tensor, head)
)
DTYPE_SPELLINGS = {"fp16": "fp16", "half": "fp16", "float16": "fp16", "bf16": "bf16", "bfloat16": "bf16"}
LAYOUTS = ("contiguous", "paged")
_FNV_BASIS, _FNV_PRIME, _U64 = 1469598103934665603, 1099511628211, (1 << 64) - 1


class RowsError(Exception):
    """The package's errors: a report that cannot be read, or the binary failing to expand a grid."""


class ReportError(RowsError):
    """A file that cannot be read as a report: 'FILE': what is wrong."""


class NotAReport(ReportError):
    """A JSON document of another schema (a cache, a suite, a tune summary); `schema` is its schema field."""

    def __init__(self, origin, schema):
        super().__init__(f"{origin}: schema is '{schema}', expected '{REPORT_SCHEMA}'")
        self.schema = schema


# ---- files ---------------------------------------------------------------------------------------------

def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f, parse_constant=_no_constant)  # NaN, Infinity: not JSON, as the binary reads it
    except OSError as e:
        raise ReportError(f"'{path}': cannot open file ({e.strerror})") from None
    except ValueError as e:
        raise ReportError(f"'{path}': malformed JSON ({e})") from None


def read_report(path):
    """The report document of `path`; NotAReport (a ReportError) when it is JSON of another schema."""
    doc = load_json(path)
    got = doc.get("schema") if isinstance(doc, dict) else None
    if got != REPORT_SCHEMA:
        raise NotAReport(f"'{path}'", got)
    return doc


def read_flat(path):
    """The flat view of the report at `path`, as `attnbench report PATH --format=json` prints it."""
    return flat_document(read_report(path), f"'{path}'")


# ---- problems: the binary's problem_from_json, problem_to_json, label and keys ---------------------------

def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def normalize_problem(p, origin="problem"):
    """The problem as the binary re-writes it after reading (problem_to_json of problem_from_json): defaults
    filled in (kv_heads = heads, q_len = seq_len, pages and page_size from each other), spellings made canonical.
    Raises ReportError naming `origin` on a missing, mistyped or inconsistent field."""
    def fail(what):
        raise ReportError(f"{origin}: {what}")
    if not isinstance(p, dict):
        fail("problem must be an object")
    words = {int: "a whole number", str: "a string", bool: "true or false"}
    v = {}
    for name, kind, required, replaces in AXES:
        if any(other_replaces == name and other in p for other, _, _, other_replaces in AXES):
            continue  # derived from the axis that stands in for it (pages from page_size)
        x = p.get(name)
        if name not in p or (x is None and not required):
            if not required:
                continue
            fail(f"problem.{name} is missing")
        if name in ("kv_lens", "q_lens") and name + "_values" in p:
            if not isinstance(x, str):
                fail(f"problem.{name} must be a string")
            lens = p[name + "_values"]
            if not isinstance(lens, list) or not lens:
                fail(f"problem.{name}_values must be a list of lengths")
            if not all(_is_int(n) and n >= 1 for n in lens):
                fail(f"problem.{name}_values must hold positive whole numbers")
            v[name], v[name + "_values"] = x, list(lens)
            continue
        ok = _is_int(x) if kind is int else isinstance(x, kind)
        if not ok:
            fail(f"problem.{name} must be {words[kind]}")
        if name == "kv_lens":
            fail("problem.kv_lens_values is missing (the lengths a ragged problem ran with)")
        if name == "q_lens":
            fail("problem.q_lens_values is missing (the query counts a mixed batch ran with)")
        if kind is int and x < 1:
            fail(f"problem.{name}: {x} is not a positive whole number")
        if name == "dtype":
            if x not in DTYPE_SPELLINGS:
                fail(f"problem.dtype: unknown dtype '{x}' (fp16, bf16)")
            x = DTYPE_SPELLINGS[x]
        if name == "kv_layout" and x not in LAYOUTS:
            fail(f"problem.kv_layout: unknown layout '{x}' (contiguous, paged)")
        if name == "kv_dtype" and x not in ("fp8_e4m3", "e4m3", "fp8", "auto", "native"):
            fail(f"problem.kv_dtype: unknown K/V cache format '{x}' (fp8_e4m3, or auto: the --dtype)")
        if name == "kv_scale" and x not in ("tensor", "head"):
            fail(f"problem.kv_scale: unknown scale granularity '{x}' (tensor, head)")
        v[name] = x
    # make_problem
    batch, heads = v["batch"], v["heads"]
    kv_heads = v.get("kv_heads", heads)
    if kv_heads > heads or heads % kv_heads:
        fail(f"problem: kv_heads={kv_heads} does not divide heads={heads}")
    lens = v.get("kv_lens_values")
    if lens is not None:
        if len(lens) != batch:
            fail(f"problem: kv_lens: {len(lens)} lengths for batch {batch}")
        seq_len = max(lens)
        if "seq_len" in p and p["seq_len"] != seq_len:
            fail(f"problem.seq_len is not the longest of its kv_lens ({seq_len})")
    elif "seq_len" in v:
        seq_len = v["seq_len"]
    else:
        fail("problem.seq_len is missing")
    counts = v.get("q_lens_values")
    q_len = v.get("q_len", max(counts) if counts else seq_len)
    if counts is not None:
        if len(counts) != batch:
            fail(f"problem: q_lens: {len(counts)} query counts for batch {batch}")
        if q_len != max(counts):
            fail(f"problem.q_len is not the most of its q_lens ({max(counts)})")
        kv = lens if lens else [seq_len] * batch
        if any(q > k for q, k in zip(counts, kv)):
            fail("problem: a sequence's query count is more than its KV length")
    else:
        shortest = min(lens) if lens else seq_len
        if q_len > shortest:
            fail(f"problem: q_len={q_len} is more than the shortest KV length {shortest}")
    if "page_size" in v:
        page_size, requested = v["page_size"], 0
        if page_size > seq_len:
            fail(f"problem: page_size={page_size} is larger than seq_len={seq_len}")
    elif "pages" not in v:
        fail("problem.pages is missing")
    else:
        requested = v["pages"]
        if requested > seq_len:
            fail(f"problem: pages={requested} is more than seq_len={seq_len} tokens")
        page_size = -(-seq_len // requested)
    pages = -(-seq_len // page_size)
    if "pages" in p and p["pages"] != pages:
        fail(f"problem.pages does not match seq_len={seq_len} and page_size={page_size} ({pages} pages)")
    if "pages_requested" in p:
        given = p["pages_requested"]
        if not _is_int(given):
            fail("problem.pages_requested must be an integer")
        if given != 0:  # 0: early reports, "not spelled"
            if given < 1:
                fail("problem.pages_requested must be a positive whole number")
            requested = given
    out = {"batch": batch, "heads": heads, "kv_heads": kv_heads, "seq_len": seq_len, "q_len": q_len,
           "head_dim": v["head_dim"], "pages": pages, "page_size": page_size, "kv_layout": v["kv_layout"],
           "dtype": v["dtype"], "causal": v["causal"], "pages_requested": requested or pages}
    if lens is not None:
        out["kv_lens"], out["kv_lens_values"] = v["kv_lens"], lens
    for name in ("window", "softcap"):
        if name in v:
            out[name] = v[name]
    if v.get("sinks") is True:  # false: as absent, the binary writes neither
        out["sinks"] = True
    if "head_dim_v" in v and v["head_dim_v"] != v["head_dim"]:  # as wide as K: as absent
        out["head_dim_v"] = v["head_dim_v"]
    if counts is not None:
        out["q_lens"], out["q_lens_values"] = v["q_lens"], counts
    fp8 = v.get("kv_dtype") in ("fp8_e4m3", "e4m3", "fp8")
    if v.get("kv_scale") == "head" and not fp8:
        fail("problem: kv_scale=head: per-head scales belong to an FP8 K/V cache (kv_dtype=fp8_e4m3)")
    if fp8:  # a 16-bit cache: as absent, the binary writes neither
        out["kv_dtype"], out["kv_scale"] = "fp8_e4m3", v.get("kv_scale", "tensor")
    return dict(sorted(out.items()))


def lengths_digest(lengths):
    """kv_lengths_digest: FNV-1a over each length's 8 little-endian bytes, folded to 32 bits."""
    h = _FNV_BASIS
    for n in lengths:
        for byte in (n & _U64).to_bytes(8, "little"):
            h = ((h ^ byte) * _FNV_PRIME) & _U64
    return f"{(h ^ (h >> 32)) & 0xffffffff:08x}"


def _lengths_label(p, axis="kv_lens", prefix="lens"):
    if not isinstance(p.get(axis + "_values"), list):
        return ""
    spec = p[axis] if isinstance(p.get(axis), str) else "list"
    if spec.startswith("uniform:"):
        return prefix + "=" + spec
    kind = spec if spec.startswith("file:") else "list"
    return f"{prefix}={kind}[{len(p[axis + '_values'])}]#{lengths_digest(p[axis + '_values'])}"


def _kv_format_fragment(p, prefix):
    """An FP8 K/V cache's fragment: "kv=e4m3" (label) or "kve4m3" (cache key), "/head" for per-head scales."""
    if p.get("kv_dtype") != "fp8_e4m3":
        return ""
    return prefix + "e4m3" + ("/head" if p.get("kv_scale") == "head" else "")


def problem_label(p):
    """The binary's label of a normalized problem: "B=32 H=12 S=512 D=64 P=1 contiguous fp16"."""
    parts = [f"B={p['batch']}", f"H={p['heads']}",
             f"KVH={p['kv_heads']}" if p["kv_heads"] != p["heads"] else "", f"S={p['seq_len']}",
             f"q={p['q_len']}" if p["q_len"] != p["seq_len"] else "", _lengths_label(p), f"D={p['head_dim']}",
             f"P={p['pages']}", f"ps={p['page_size']}" if p["pages"] > 1 else "", p["kv_layout"], p["dtype"],
             "causal" if p["causal"] else "", f"win={p['window']}" if p.get("window") else "",
             f"cap={p['softcap']}" if p.get("softcap") else "", "sinks" if p.get("sinks") is True else "",
             f"Dv={p['head_dim_v']}" if p.get("head_dim_v") else "", _lengths_label(p, "q_lens", "qlens"),
             _kv_format_fragment(p, "kv=")]
    return " ".join(x for x in parts if x)


def problem_key(p):
    """The binary's match key of a normalized problem: its JSON, keys sorted, without pages_requested."""
    return json.dumps({k: x for k, x in p.items() if k != "pages_requested"}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)


def problem_cache_key(p):
    """The problem's key in the heuristic cache: "B32_H12_S512_D64_P1_ps512_contiguous_fp16_full"."""
    parts = [f"B{p['batch']}", f"H{p['heads']}", f"KVH{p['kv_heads']}" if p["kv_heads"] != p["heads"] else "",
             f"S{p['seq_len']}", f"q{p['q_len']}" if p["q_len"] != p["seq_len"] else "",
             "lens#" + lengths_digest(p["kv_lens_values"]) if isinstance(p.get("kv_lens_values"), list) else "",
             f"D{p['head_dim']}", f"P{p['pages']}", f"ps{p['page_size']}", p["kv_layout"], p["dtype"],
             "causal" if p["causal"] else "full", f"win{p['window']}" if p.get("window") else "",
             f"cap{p['softcap']}" if p.get("softcap") else "", "sinks" if p.get("sinks") is True else "",
             f"Dv{p['head_dim_v']}" if p.get("head_dim_v") else "",
             "qlens#" + lengths_digest(p["q_lens_values"]) if isinstance(p.get("q_lens_values"), list) else "",
             _kv_format_fragment(p, "kv")]
    return "_".join(x for x in parts if x)


# ---- rows: the binary's typed reading, then its flat view ----------------------------------------------------

class _Reader:
    """Field reads of one result row, with the binary's types: a present field of the wrong type is a
    ReportError "ORIGIN: results[3].field must be ..."; absent optional fields give the fallback."""

    def __init__(self, origin, where):
        self.origin, self.where = origin, where

    def fail(self, path, what):
        raise ReportError(f"{self.origin}: {self.where}{path} {what}")

    def obj(self, j, key, path=""):
        x = j.get(key)
        if key in j and not isinstance(x, dict):
            self.fail(path + key, "must be an object")
        return x

    def text(self, j, key, path="", fallback=""):
        if key not in j:
            return fallback
        if not isinstance(j[key], str):
            self.fail(path + key, "must be a string")
        return j[key]

    def integer(self, j, key, path="", fallback=-1):
        if key not in j:
            return fallback
        if not _is_int(j[key]):
            self.fail(path + key, "must be an integer")
        return j[key]

    def number(self, j, key, path=""):  # absent or null: NaN
        x = j.get(key)
        if x is None:
            return math.nan
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            self.fail(path + key, "must be a number or null")
        return float(x)

    def flag(self, j, key, path=""):  # None when absent
        if key not in j:
            return None
        if not isinstance(j[key], bool):
            self.fail(path + key, "must be true or false")
        return j[key]

    def strings(self, j, key, path=""):
        x = j.get(key, [])
        if not isinstance(x, list):
            self.fail(path + key, "must be a list")
        if not all(isinstance(s, str) for s in x):
            self.fail(path + key, "must hold strings")
        return x

    def numbers(self, j, key, path=""):
        x = j.get(key, [])
        if not isinstance(x, list):
            self.fail(path + key, "must be a list")
        if not all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in x):
            self.fail(path + key, "must hold numbers")
        return x


def _finite(x):
    return x is not None and not isinstance(x, bool) and math.isfinite(x)


def _num(x):
    return x if _finite(x) else None


def _count(x):
    return x if x >= 0 else None


def _no_constant(name):
    raise ValueError(name)  # NaN, Infinity: not JSON numbers for the binary


def _text(text):
    """A text column as the flat JSON has it: null when empty."""
    return text if text != "" else None


def _tile_name(t):
    """FusedTile::name() of a report's tile object (its optional fields false or 0 when left out, as the binary reads it)."""
    block_m, block_n, warps, stages = t["block_m"], t["block_n"], t["warps"], t["stages"]
    ws, row_boxes, decode, splits = t.get("ws", False), t.get("row_boxes", False), t.get("decode", False), t.get("splits", 0)
    persistent = ws and t.get("persistent", False)
    if decode:
        return ("decode" + ("-ws" if ws else "") + (f"-n{block_n}" if block_n != 64 else "") + ("-rows" if row_boxes else "")
                + (f"-s{splits}" if splits > 0 else ""))
    return f"m{block_m}n{block_n}w{warps}s{stages}" + (("wsp" if persistent else "ws") if ws else "")


def _view(row, origin, index):
    """One row read as the binary's RowView: the values the flat row shows, before grouping."""
    r = _Reader(origin, f"results[{index}].")
    if not isinstance(row, dict):
        raise ReportError(f"{origin}: results[{index}] must be an object")
    problem = r.obj(row, "problem")
    if problem is None:
        r.fail("problem", "is missing")
    words = {int: "an integer", str: "a string", bool: "true or false"}
    for name, kind, _, _ in AXES:  # the axes' types first, as the binary checks them (then the problem itself)
        if name in problem and not (_is_int(problem[name]) if kind is int else isinstance(problem[name], kind)):
            r.fail(f"problem.{name}", f"must be {words[kind]}")
    r.integer(problem, "pages_requested", "problem.", 0)
    problem = normalize_problem(problem, f"{origin}: results[{index}]")
    for key in ("strategy", "status"):
        if key not in row:
            r.fail(key, "is missing")
    strategy, status = r.text(row, "strategy"), r.text(row, "status")
    if status not in STATUSES:
        r.fail("status", f"'{status}' is not ok, unsupported, incorrect or failed")
    device = r.integer(row, "device")
    if "device" in row and not 0 <= device <= 1 << 20:
        r.fail("device", "must be a device index (0 or more)")
    v = {"problem": problem, "strategy": strategy, "status": status, "reason": r.text(row, "reason"),
         "device_index": device if device >= 0 else None, "library_version": r.text(row, "library_version")}

    # launches
    launches = r.obj(row, "launches") or {}
    expected = r.obj(launches, "expected", "launches.")
    measured = r.obj(launches, "measured", "launches.")
    total, formula = -1, ""
    if expected is not None:
        total = r.integer(expected, "gemm", "launches.expected.", 0) + r.integer(expected, "kernels", "launches.expected.", 0)
        r.integer(expected, "total", "launches.expected.", 0)
        formula = r.text(expected, "formula", "launches.expected.")
    kernels, names, source = -1, [], ""
    if measured is not None:
        kernels = r.integer(measured, "kernels", "launches.measured.", -1)
        r.integer(measured, "gemm_calls", "launches.measured.", -1)
        r.integer(measured, "other_kernels", "launches.measured.", -1)
        source = r.text(measured, "source", "launches.measured.")
        names = r.strings(measured, "kernel_names", "launches.measured.")
    match = r.flag(launches, "match", "launches.")
    if match is None:
        match = not (expected is not None and measured is not None and kernels >= 0 and kernels != total)
    r.text(launches, "explained", "launches.")
    known = expected is not None and measured is not None and total >= 0 and kernels >= 0
    v.update(launches_expected=_count(total) if expected is not None else None,
             launches_measured=_count(kernels) if measured is not None else None,
             launches_match=bool(match) if known else None,  # a verdict only where both counts are known
             launch_formula=formula if expected is not None else "",
             launch_source=source if measured is not None else "",
             kernel_names="; ".join(names) if measured is not None else "")

    # config
    config = r.obj(row, "config")
    tile = tile_source = config_source = score_dtype = gemm_algos = ""
    gathered = gqa = None
    padded = math.nan
    if config is not None:
        if "score_dtype" in config:
            score_dtype = r.text(config, "score_dtype", "config.")
            if score_dtype not in ("fp16", "bf16", "fp32"):
                r.fail("config.score_dtype", "is not a known dtype")
        gathered = r.flag(config, "gathered_pages", "config.")
        gqa = r.flag(config, "gqa_packed", "config.")
        if "padded_fraction" in config:
            padded = r.number(config, "padded_fraction", "config.")
        t = r.obj(config, "tile", "config.")
        if t is not None:  # as FusedTile::from_json reads it (src/core/fused_tile.cpp)
            for key in ("block_m", "block_n", "warps", "stages"):
                if key not in t:
                    r.fail(f"config.tile.{key}", "is missing")
                if not 0 < r.integer(t, key, "config.tile.") <= 1 << 20:
                    r.fail(f"config.tile.{key}", "must be positive")
            for key in ("ws", "persistent", "row_boxes", "decode"):
                r.flag(t, key, "config.tile.")
            if t.get("decode") and not 0 <= r.integer(t, "splits", "config.tile.", 0) <= 1 << 20:
                r.fail("config.tile.splits", "must be 0 or more")
            tile = _tile_name(t)
        tile_source = r.text(config, "tile_source", "config.")
        r.text(config, "plugin_config", "config.")
        plans = config.get("gemm_algos", [])
        if not isinstance(plans, list):
            r.fail("config.gemm_algos", "must be a list")
        texts = []
        for g in plans:
            if not isinstance(g, dict):
                r.fail("config.gemm_algos", "must hold objects")
            shape, algo = r.text(g, "shape", "config.gemm_algos[]."), r.text(g, "algo", "config.gemm_algos[].")
            src = r.text(g, "source", "config.gemm_algos[].")
            texts.append(f"{shape}={algo}" + (f" ({src})" if src else ""))
        gemm_algos = "; ".join(texts)
        config_source = r.text(config, "source", "config.")
    v.update(tile=tile, tile_source=tile_source, config_source=config_source, score_dtype=score_dtype,
             gathered_pages=gathered, gqa_packed=gqa, padded_fraction=padded, gemm_algos=gemm_algos)

    # verify, injected slowdown, rates
    verify = r.obj(row, "verify")
    if verify is not None:
        r.text(verify, "reference", "verify.")
        passed = r.flag(verify, "passed", "verify.")
        if passed is None:
            r.fail("verify.passed", "is missing")
        v.update(rel_l2_err=r.number(verify, "rel_l2_err", "verify."), tolerance=r.number(verify, "tolerance", "verify."),
                 max_abs_err=r.number(verify, "max_abs_err", "verify."), verify_passed=passed)
        r.integer(verify, "nonfinite", "verify.", 0)
    else:
        v.update(rel_l2_err=math.nan, tolerance=math.nan, max_abs_err=math.nan, verify_passed=None)
    slowdown = r.obj(row, "injected_slowdown")
    if slowdown is not None:
        for key in ("fraction", "delay_ms", "base_ms"):
            r.number(slowdown, key, "injected_slowdown.")
    v["injected_slowdown"] = r.number(slowdown, "achieved", "injected_slowdown.") if slowdown is not None else None
    v.update(tflops=r.number(row, "tflops"), gbps=r.number(row, "gbps"), copy_fraction=r.number(row, "copy_fraction"))

    # timing: only with a time_ms object
    time_ms = r.obj(row, "time_ms")
    v.update(median_ms=math.nan, mean_ms=math.nan, min_ms=math.nan, max_ms=math.nan, stdev_ms=math.nan,
             noise=math.nan, samples=-1, noise_met=None, rounds=1, round_spread=math.nan,
             round_error=math.nan, sm_clock_mhz=0, clock_low=False, timer=None, stop_reason=None,
             host_median_ms=math.nan)
    if time_ms is not None:
        stats = {k: r.number(time_ms, k, "time_ms.") for k in ("median", "mean", "min", "max", "stdev", "noise")}
        samples = r.integer(time_ms, "samples", "time_ms.", -1)
        host = r.obj(row, "host_ms") or {}
        host_median = r.number(host, "median", "host_ms.")
        for k in ("mean", "min", "max", "stdev", "noise"):
            r.number(host, k, "host_ms.")
        r.integer(host, "samples", "host_ms.", -1)
        v.update(median_ms=stats["median"], mean_ms=stats["mean"], min_ms=stats["min"], max_ms=stats["max"],
                 stdev_ms=stats["stdev"], noise=stats["noise"], samples=samples, host_median_ms=host_median,
                 timer=r.text(row, "timer"), stop_reason=r.text(row, "stop_reason"),
                 noise_met=r.flag(row, "noise_met"), sm_clock_mhz=r.integer(row, "sm_clock_mhz", "", 0),
                 clock_low=bool(r.flag(row, "clock_low")))
        rounds = r.obj(row, "rounds")
        if rounds is not None:
            r.numbers(rounds, "medians_ms", "rounds.")
            r.integer(rounds, "kept", "rounds.", 0)
            v.update(rounds=max(1, r.integer(rounds, "count", "rounds.", 1)),
                     round_spread=r.number(rounds, "spread", "rounds."), round_error=r.number(rounds, "error", "rounds."))
        if "samples_ms" in row:
            r.numbers(row, "samples_ms")
    return v


def _timed(v):
    return v["status"] == "ok" and v["median_ms"] > 0  # NaN > 0 is False


def _flat_row(index, key, v, best, fastest, fastest_own, device):
    """The binary's flat row: the problem and every column of its result column table
    (src/report/result_columns.cpp), typed as the binary types them."""
    p = v["problem"]
    timed = _timed(v)
    row = {
        "index": index, "label": problem_label(p), "key": key, "cache_key": problem_cache_key(p), "problem": p,
        "strategy": v["strategy"], "peer": v["strategy"].startswith("peer:"), "status": v["status"],
        "reason": v["reason"], "device_index": v["device_index"], "device": device, "median_ms": _num(v["median_ms"]),
        "mean_ms": _num(v["mean_ms"]), "min_ms": _num(v["min_ms"]), "max_ms": _num(v["max_ms"]),
        "stdev_ms": _num(v["stdev_ms"]), "fastest_own": fastest_own,
        "noise": _num(v["noise"]), "samples": _count(v["samples"]), "noise_met": v["noise_met"],
        "rounds": v["rounds"], "round_spread": _num(v["round_spread"]), "round_error": _num(v["round_error"]),
        "sm_clock_mhz": v["sm_clock_mhz"] or None, "clock_low": v["clock_low"], "tflops": _num(v["tflops"]),
        "gbps": _num(v["gbps"]), "copy_fraction": _num(v["copy_fraction"]),
        "vs_best": _num(v["median_ms"] / best) if timed else None, "fastest": fastest,
        "launches_expected": v["launches_expected"], "launches_measured": v["launches_measured"],
        "launches_match": v["launches_match"], "rel_l2_err": _num(v["rel_l2_err"]),
        "verify_passed": v["verify_passed"], "timer": v["timer"], "stop_reason": v["stop_reason"],
        "host_median_ms": _num(v["host_median_ms"]), "tolerance": _num(v["tolerance"]),
        "max_abs_err": _num(v["max_abs_err"]), "tile": _text(v["tile"]), "tile_source": _text(v["tile_source"]),
        "config_source": _text(v["config_source"]), "score_dtype": _text(v["score_dtype"]),
        "gathered_pages": v["gathered_pages"], "gqa_packed": v["gqa_packed"],
        "padded_fraction": _num(v["padded_fraction"]), "gemm_algos": _text(v["gemm_algos"]),
        "launch_formula": _text(v["launch_formula"]), "launch_source": _text(v["launch_source"]),
        "kernel_names": _text(v["kernel_names"]), "injected_slowdown": _num(v["injected_slowdown"]),
        "library_version": _text(v["library_version"]),
    }
    return dict(sorted(row.items()))  # the binary's key order


def _header(doc, origin):
    """The tool, device, devices and settings of the flat document, type-checked as the binary does."""
    def fail(what):
        raise ReportError(f"{origin}: {what}")
    tool = doc.get("tool", {"name": "attnbench"})
    if not isinstance(tool, dict):
        fail("tool must be an object")
    for key in ("name", "version", "git"):
        if key in tool and not isinstance(tool[key], str):
            fail(f"tool.{key} must be a string")
    out_tool = {"name": tool.get("name", "attnbench"), "version": tool.get("version", ""), "git": tool.get("git", "")}
    for key in ("command", "created", "interrupted"):
        if key in doc and not isinstance(doc[key], str):
            fail(f"{key} must be a string")
    typed = {"device": {"name": str, "backend": str, "cc": str, "sm_count": int, "driver": str, "cuda_runtime": str,
                        "copy_bandwidth_gbps": float, "peak_tflops": float},
             "settings": {"hot": bool, "verify": bool, "timer": str, "warmup": int, "min_samples": int,
                          "max_noise": float}}
    words = {str: "a string", bool: "true or false", int: "an integer", float: "a number"}
    objects = {}
    for section, fields in typed.items():
        obj = doc.get(section, {})
        if not isinstance(obj, dict):
            fail(f"{section} must be an object")
        for key, kind in fields.items():
            if key not in obj:
                continue
            x = obj[key]
            ok = (isinstance(x, bool) if kind is bool else _is_int(x) if kind is int else
                  isinstance(x, (int, float)) and not isinstance(x, bool) if kind is float else isinstance(x, str))
            if not ok:
                fail(f"{section}.{key} must be {words[kind]}")
        objects[section] = obj
    devices = doc.get("devices", [])
    if not isinstance(devices, list):
        fail("devices must be a list")
    for i, d in enumerate(devices):
        if not isinstance(d, dict):
            fail(f"devices[{i}] must be an object")
        if not _is_int(d.get("index")) or d["index"] < 0:
            fail(f"devices[{i}].index must be a device index (0 or more)")
        if "name" in d and not isinstance(d["name"], str):
            fail(f"devices[{i}].name must be a string")
    warnings = doc.get("warnings", [])
    if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
        fail("warnings must be a list of strings")
    if "journal" in doc and not (isinstance(doc["journal"], dict) and isinstance(doc["journal"].get("complete"), bool)):
        fail("journal must be an object with a true or false complete")
    if "shard" in doc and not (isinstance(doc["shard"], dict) and _is_int(doc["shard"].get("index"))
                               and _is_int(doc["shard"].get("count"))):
        fail("shard must be an object with an integer index and count")
    return out_tool, objects["device"], devices, objects["settings"]


def flat_document(doc, origin="report"):
    """The flat view of a report document (attnbench.rows/1): its rows grouped by problem in first-seen order,
    each row's group in report order, with the fastest timed row of each problem marked."""
    if not isinstance(doc, dict) or doc.get("schema") != REPORT_SCHEMA:
        raise NotAReport(origin, doc.get("schema") if isinstance(doc, dict) else None)
    tool, device, devices, settings = _header(doc, origin)
    if "results" not in doc:
        raise ReportError(f"{origin}: no 'results' list")
    if not isinstance(doc["results"], list):
        raise ReportError(f"{origin}: results must be a list")
    groups = {}  # problem key -> [(index, view)], in first-seen order
    for i, row in enumerate(doc["results"]):
        v = _view(row, origin, i)
        groups.setdefault(problem_key(v["problem"]), []).append((i, v))
    names = {d["index"]: d.get("name", "") for d in reversed(devices)}  # the first entry of an index wins

    def device_name(v):
        index = v["device_index"] if v["device_index"] is not None else -1
        return names[index] if index in names else device.get("name", "")

    rows = []
    for key, members in groups.items():
        fastest = own = None
        for i, v in members:
            if _timed(v) and (fastest is None or v["median_ms"] < fastest[1]["median_ms"]):
                fastest = (i, v)
            if _timed(v) and not v["strategy"].startswith("peer:") and (own is None or v["median_ms"] < own[1]["median_ms"]):
                own = (i, v)
        best = fastest[1]["median_ms"] if fastest else math.nan
        peer_faster = fastest is not None and fastest[1]["strategy"].startswith("peer:")
        for i, v in members:
            is_fastest = fastest is not None and fastest[0] == i
            is_own = (own is not None and own[0] == i) if peer_faster else is_fastest and not v["strategy"].startswith("peer:")
            rows.append(_flat_row(i, key, v, best, is_fastest, is_own, device_name(v)))
    return {"schema": ROWS_SCHEMA, "tool": tool, "device": device, "devices": devices, "settings": settings,
            "rows": rows}


def flat_rows(path):
    """The report's flat rows indexed like its `results` array."""
    rows = read_flat(path)["rows"]
    out = [None] * len(rows)
    for r in rows:
        out[r["index"]] = r
    return out
