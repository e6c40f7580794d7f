//! The host's index checks in C: `<prefix>_check_indices` runs [`DmlGraph::host_checks`] on the
//! plan's input buffers, as the emulator runs them before it dispatches (same order, same
//! normalization, same first failure), so a host can refuse out-of-range indices that DirectML
//! would leave undefined.
//!
//! Index values are read into sign and magnitude (`<prefix>_index`), which holds every INT64
//! and UINT64 value exactly in portable C99; addresses are `long long`, as the plan's are
//! bounded by its verifier.

use super::super::graph::{BindingSource, DmlGraph, HostAccess, HostCheck, HostCheckKind};
use crate::types::OobMode;
use slc_runtime::DType;
use std::fmt::Write;

/// The status codes, in the order of their values (0 is success).
const STATUSES: [(&str, &str); 5] = [
    ("OK", "every index is in range: dispatch"),
    ("INDEX_OUT_OF_RANGE", "a plan check failed (NumPy's IndexError; slc's E0201)"),
    ("GATHER_OUT_OF_RANGE", "an error-mode index no plan check covers is out of range (E0202)"),
    ("EMPTY_AXIS", "clamp or wrap on an axis of size 0 (E0202)"),
    ("OUT_OF_BUFFER", "a read outside an input buffer: the graph does not fit its inputs (E0299)"),
];

/// The mode codes `<prefix>_normalize` takes.
fn mode_code(mode: OobMode) -> u8 {
    match mode {
        OobMode::Error => 0,
        OobMode::Zero => 1,
        OobMode::Clamp => 2,
        OobMode::Wrap => 3,
    }
}

/// Appends the check types and functions for `graph` to `out`.
pub(super) fn emit(out: &mut String, graph: &DmlGraph, prefix: &str) {
    let up = prefix.to_uppercase();
    let inputs: Vec<String> = graph
        .inputs
        .iter()
        .enumerate()
        .map(|(i, d)| format!("inputs[{i}] = {} ({}{:?})", d.name, d.dtype, d.shape))
        .collect();
    let _ = writeln!(
        out,
        "\n/* Host index checks: the JSON's HostChecks ({} of them). DirectML leaves out-of-range gather\n \
         * indices undefined, so before dispatching {prefix}_graph the host calls\n \
         * {prefix}_check_indices on the plan's input buffers and dispatches only on {up}_CHECK_OK.\n \
         * inputs[i] points at plan input i's elements, C order: {}. */",
        graph.host_checks.len(),
        if inputs.is_empty() { "none".to_string() } else { inputs.join(", ") }
    );
    let _ = writeln!(out, "enum {{");
    for (i, (name, meaning)) in STATUSES.iter().enumerate() {
        let comma = if i + 1 < STATUSES.len() { "," } else { "" };
        let _ = writeln!(out, "    {up}_CHECK_{name} = {i}{comma} /* {meaning} */");
    }
    let _ = writeln!(out, "}};\n");
    let _ = writeln!(
        out,
        "/* What failed: the HostChecks entry, its plan check number (-1 for a guard), the index value\n \
         * (index_is_unsigned: a UINT64 of 2^63 or more, held as its bits), and the range [-len, len)\n \
         * of the axis it indexes. The index fields are 0 unless the status is INDEX_OUT_OF_RANGE or\n \
         * GATHER_OUT_OF_RANGE from the checked tensor itself. */\n\
         typedef struct {prefix}_check_failure {{\n    int check;\n    int plan_check;\n    long long index;\n    \
         int index_is_unsigned;\n    long long len;\n    unsigned axis;\n}} {prefix}_check_failure;\n"
    );
    let _ = writeln!(
        out,
        "/* Runs the checks in HostChecks order; returns {up}_CHECK_OK or the first failure's status\n \
         * (describing it in *failure unless failure is NULL). */\n\
         int {prefix}_check_indices(const void *const *inputs, {prefix}_check_failure *failure);\n"
    );
    if graph.host_checks.is_empty() {
        let _ = writeln!(
            out,
            "int {prefix}_check_indices(const void *const *inputs, {prefix}_check_failure *failure) {{\n    \
             (void)inputs;\n    (void)failure;\n    return {up}_CHECK_OK;\n}}"
        );
        return;
    }
    let _ = writeln!(
        out,
        "/* A loaded index value: sign and magnitude hold INT64 and UINT64 alike. */\n\
         typedef struct {{\n    int negative;\n    unsigned long long magnitude;\n}} {prefix}_index;\n"
    );
    // OobMode::normalize, over sign and magnitude.
    let _ = writeln!(
        out,
        "/* Maps j into [0, n) by mode (0 error, 1 zero, 2 clamp, 3 wrap), as the plan IR does\n \
         * (docs/semantics.md, gather): returns 0 with *out set, 1 for a zero-mode miss, 2 when no\n \
         * index is valid (an error-mode miss; clamp or wrap on an empty axis). */\n\
         static int {prefix}_normalize(int mode, {prefix}_index j, long long n, long long *out) {{\n    \
         unsigned long long un = (unsigned long long)n;\n    \
         int inside = j.negative ? j.magnitude <= un : j.magnitude < un;\n    \
         if (mode == 0 || mode == 1) {{\n        \
         if (!inside) return mode == 0 ? 2 : 1;\n        \
         *out = j.negative ? (long long)(un - j.magnitude) : (long long)j.magnitude;\n        \
         return 0;\n    }}\n    \
         if (n == 0) return 2;\n    \
         if (mode == 2) {{\n        \
         *out = j.negative ? 0 : (long long)(j.magnitude < un ? j.magnitude : un - 1);\n    \
         }} else {{\n        \
         unsigned long long r = j.magnitude % un;\n        \
         *out = (long long)(j.negative && r != 0 ? un - r : r);\n    }}\n    \
         return 0;\n}}\n"
    );
    let mut w = ChecksWriter { out: String::new(), prefix, up: &up, graph, loads: vec![] };
    for (k, check) in graph.host_checks.iter().enumerate() {
        w.check(k, check);
    }
    out.push_str(&w.out);
    let _ = writeln!(
        out,
        "int {prefix}_check_indices(const void *const *inputs, {prefix}_check_failure *failure) {{\n    int s;"
    );
    for k in 0..graph.host_checks.len() {
        let _ =
            writeln!(out, "    if ((s = {prefix}_check_{k}(inputs, failure)) != {up}_CHECK_OK) return s;");
    }
    let _ = writeln!(out, "    return {up}_CHECK_OK;\n}}");
}

struct ChecksWriter<'a> {
    out: String,
    prefix: &'a str,
    up: &'a str,
    graph: &'a DmlGraph,
    /// The load functions written so far, by the access they read (checks often share one).
    loads: Vec<(HostAccess, String)>,
}

impl ChecksWriter<'_> {
    /// Writes the function that reads `access` at the check's coordinates `c` (and those of its
    /// terms' accesses first); returns its name.
    fn load(&mut self, access: &HostAccess) -> String {
        if let Some((_, name)) = self.loads.iter().find(|(a, _)| a == access) {
            return name.clone();
        }
        let terms: Vec<String> = access.terms.iter().map(|t| self.load(&t.index)).collect();
        let (p, up) = (self.prefix, self.up);
        let name = format!("{p}_load_{}", self.loads.len());
        self.loads.push((access.clone(), name.clone()));
        let mut f = format!(
            "static int {name}(const void *const *inputs, const long long *c, {p}_index *value) {{\n    \
             long long at = {}LL",
            access.base
        );
        for (d, s) in access.strides.iter().enumerate().filter(|(_, s)| **s != 0) {
            let _ = write!(f, " + c[{d}] * {s}LL");
        }
        f.push_str(";\n    (void)inputs;\n    (void)c;\n");
        if !terms.is_empty() {
            let _ = writeln!(f, "    {{\n        {p}_index j;\n        long long n;\n        int s;");
            for (term, load) in access.terms.iter().zip(&terms) {
                let miss = if term.mode == OobMode::Error { "GATHER_OUT_OF_RANGE" } else { "EMPTY_AXIS" };
                let _ = writeln!(
                    f,
                    "        /* {} term: {}LL * normalize({}, len {}) */\n        \
                     if ((s = {load}(inputs, c, &j)) != {up}_CHECK_OK) return s;\n        \
                     s = {p}_normalize({}, j, {}LL, &n);\n        \
                     if (s == 1) {{\n            value->negative = 0;\n            value->magnitude = 0;\n            \
                     return {up}_CHECK_OK;\n        }}\n        \
                     if (s == 2) return {up}_CHECK_{miss};\n        \
                     at += n * {}LL;",
                    term.mode.name(),
                    term.stride,
                    term.mode.name(),
                    term.len,
                    mode_code(term.mode),
                    term.len,
                    term.stride
                );
            }
            f.push_str("    }\n");
        }
        let (array, numel, read) = match access.source {
            BindingSource::Input(i) => {
                let decl = &self.graph.inputs[i];
                let numel: i64 = decl.shape.iter().product();
                let dtype = DType::from_name(&decl.dtype).filter(|d| d.is_integer());
                let read = dtype.map(|d| {
                    let bits = d.width() * 8;
                    let ctype = if d.is_signed() { format!("int{bits}_t") } else { format!("uint{bits}_t") };
                    (format!("((const {ctype} *)inputs[{i}])[at]"), d.is_signed())
                });
                (format!("input {i} ({})", decl.name), numel, read)
            }
            // Constants are INT64 values in the JSON, whatever their DataType.
            BindingSource::Constant(k) => {
                let numel = self.graph.constants[k].values.len() as i64;
                (format!("constant {k}"), numel, Some((format!("(long long){p}_const{k}[at]"), true)))
            }
        };
        let _ = writeln!(
            f,
            "    /* read {array} */\n    if (at < 0 || at >= {numel}LL) return {up}_CHECK_OUT_OF_BUFFER;"
        );
        match read {
            Some((expr, true)) => {
                let _ = writeln!(
                    f,
                    "    {{\n        long long v = {expr};\n        value->negative = v < 0;\n        \
                     value->magnitude = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;\n    }}"
                );
            }
            Some((expr, false)) => {
                let _ = writeln!(f, "    value->negative = 0;\n    value->magnitude = {expr};");
            }
            // Not integers: the emulator's read finds no index there either.
            None => {
                let _ = writeln!(f, "    (void)value;\n    return {up}_CHECK_OUT_OF_BUFFER;\n}}\n");
                self.out.push_str(&f);
                return name;
            }
        }
        let _ = writeln!(f, "    return {up}_CHECK_OK;\n}}\n");
        self.out.push_str(&f);
        name
    }

    /// Writes `<prefix>_check_<k>`: every value of the check's index over its shape, in C order,
    /// must lie in `[-len, len)`.
    fn check(&mut self, k: usize, check: &HostCheck) {
        let load = self.load(&check.index);
        let (p, up) = (self.prefix, self.up);
        let (plan_check, failed) = match check.kind {
            HostCheckKind::PlanCheck(i) => (i as i64, "INDEX_OUT_OF_RANGE"),
            HostCheckKind::Guard => (-1, "GATHER_OUT_OF_RANGE"),
        };
        let rank = check.shape.len();
        let mut f = format!(
            "/* HostChecks[{k}]: {}, shape {:?}, values in [-{len}, {len}). */\n\
             static int {p}_check_{k}(const void *const *inputs, {p}_check_failure *failure) {{\n    \
             long long c[{}] = {{0}};\n    {p}_index j = {{0, 0}};\n    long long n;\n    int s;\n",
            match check.kind {
                HostCheckKind::PlanCheck(i) => format!("plan check {i} (axis {})", check.axis),
                HostCheckKind::Guard => "a guard".to_string(),
            },
            check.shape,
            rank.max(1),
            len = check.len,
        );
        let mut indent = "    ".to_string();
        for (d, n) in check.shape.iter().enumerate() {
            let _ = writeln!(f, "{indent}for (c[{d}] = 0; c[{d}] < {n}LL; c[{d}]++)");
            indent.push_str("    ");
        }
        let _ = writeln!(
            f,
            "{indent}{{\n\
             {indent}    int own = 0;\n\
             {indent}    s = {load}(inputs, c, &j);\n\
             {indent}    if (s == {up}_CHECK_OK && {p}_normalize(0, j, {len}LL, &n) != 0) {{\n\
             {indent}        s = {up}_CHECK_{failed};\n\
             {indent}        own = 1;\n\
             {indent}    }}\n\
             {indent}    if (s != {up}_CHECK_OK) {{\n\
             {indent}        if (failure) {{\n\
             {indent}            failure->check = {k};\n\
             {indent}            failure->plan_check = {plan_check};\n\
             {indent}            failure->index = !own ? 0 : j.negative ? (long long)(0ULL - j.magnitude) : (long long)j.magnitude;\n\
             {indent}            failure->index_is_unsigned = own && !j.negative && j.magnitude > 9223372036854775807ULL;\n\
             {indent}            failure->len = {len}LL;\n\
             {indent}            failure->axis = {axis};\n\
             {indent}        }}\n\
             {indent}        return s;\n\
             {indent}    }}\n\
             {indent}}}",
            len = check.len,
            axis = check.axis,
        );
        let _ = writeln!(f, "    (void)n;\n    return {up}_CHECK_OK;\n}}\n");
        self.out.push_str(&f);
    }
}
