//! Ahead-of-time store kernels (`a[i] = v`, `a[i] += v` and the other stores compiled to objects):
//! a sample of the golden corpus's stores, each compiled, linked with a generated C driver and
//! run three ways against the interpreter: into another buffer (the target copied, then
//! updated; nothing past the output touched), in place (the target itself as the output:
//! updated, or refused with `STORE_READS_TARGET` exactly where the update reads its target,
//! may fail after its first write or may combine with one element twice, and then untouched),
//! and over part of the range (refused: a store runs whole).

#[path = "support/cases.rs"]
mod cases;
#[path = "support/objects.rs"]
mod objects;

#[path = "support/scratch.rs"]
mod scratch_dir;
use cases::{Case, hex, oracle};
use objects::{check_object, link_and_run};
use scratch_dir::scratch;
use slc::backend::{aot, loopnest};
use slc::plan::{BufferId, InputDecl};
use slc::types::sym::SymExpr;
use std::fmt::Write as _;

/// One store kernel: its case, name, target slot, whether it may run in place, and the
/// interpreter's answer.
struct Job<'c> {
    case: &'c Case,
    name: String,
    target: usize,
    in_place: bool,
    expect: Result<Vec<u8>, i32>,
}

/// A C program that runs every kernel into `outa`, in place in `outb`, and over a part of its
/// range; prints `INDEX STATUS CANARY PART_REFUSED IN_PLACE_STATUS IN_PLACE_BYTES HEX`, where
/// IN_PLACE_BYTES is 1 when `outb` holds `outa`'s bytes (after success) or the target's own
/// (after a refusal or an error).
fn driver(jobs: &[Job]) -> String {
    let mut c = cases::c_driver_prelude(jobs.iter().map(|j| (j.name.as_str(), j.case)));
    for (i, j) in jobs.iter().enumerate() {
        let (up, n, t) = (j.name.to_uppercase(), &j.name, j.target);
        let ptrs: String = (0..j.case.inputs.len()).map(|k| format!("in{i}_{k}, ")).collect();
        let _ = writeln!(
            c,
            "  {{ const uint8_t *in[] = {{ {ptrs}NULL }}; const uint8_t *own[] = {{ {ptrs}NULL }};\n\
             \x20   long nb = (long){up}_OUT_NBYTES; own[{t}] = outb;\n\
             \x20   memset(outa, 0xab, nb + 64);\n\
             \x20   int s = {n}(in, outa, 0, {up}_OUTER);\n\
             \x20   int canary = 1; for (long b = nb; b < nb + 64; b++) canary &= outa[b] == 0xab;\n\
             \x20   int part = {up}_OUTER == 0 || ({n}(in, outb, 0, {up}_OUTER - 1) == {up}_STATUS_BAD_RANGE\n\
             \x20       && {n}(in, outb, 1, {up}_OUTER) == {up}_STATUS_BAD_RANGE);\n\
             \x20   memcpy(outb, in{i}_{t}, nb);\n\
             \x20   int si = {n}(own, outb, 0, {up}_OUTER);\n\
             \x20   int same = memcmp(outb, si == 0 ? outa : in{i}_{t}, nb) == 0;\n\
             \x20   printf(\"{i} %d %d %d %d %d \", s, canary, part, si, same); dump(outa, nb); printf(\"\\n\"); }}",
        );
    }
    c.push_str("  return 0;\n}\n");
    c
}

#[test]
fn golden_stores_as_linked_kernels() {
    let mut sample = cases::golden_stores(400, 0x57_0e5);
    // Stores that read their target: in place, they are refused.
    let a = slc::Tensor::from_bytes(slc::DType::F32, &[5, 3], &(0..60).collect::<Vec<u8>>()).unwrap();
    for src in ["a[1:] = a[:-1]", "a[::-1, 1] = a[:, 0]"] {
        sample.push(Case { id: src.into(), src: src.into(), inputs: vec![("a".into(), a.clone())] });
    }
    // One value through a mask over rows longer than a vector trip (16 mask bytes widened into
    // lanes), through a mask of rows (each row skipped or filled), or over a box (fill runs),
    // on the baseline features objects are built for, each element width.
    let mut rng = slc::measure::SplitMix(0x3a5c);
    for (k, dtype) in
        [slc::DType::U8, slc::DType::I16, slc::DType::F32, slc::DType::F64].into_iter().enumerate()
    {
        let (rows, cols) = (5, 37 + k);
        let bytes: Vec<u8> = (0..rows * cols * dtype.width()).map(|x| (x % 7) as u8).collect();
        let a = slc::Tensor::from_bytes(dtype, &[rows, cols], &bytes).unwrap();
        let bits: Vec<u8> = (0..rows * cols).map(|_| (rng.next_u64() % 2) as u8).collect();
        let m = slc::Tensor::from_bytes(slc::DType::Bool, &[rows, cols], &bits).unwrap();
        let r = slc::Tensor::from_bytes(slc::DType::Bool, &[rows], &bits[..rows]).unwrap();
        for src in ["a[m] = 3", "a[m] += 3", "a[1:][m[1:]] = 2", "a[r] = 3", "a[r, 1:] *= 3", "a[1:, 2:] = 3"]
        {
            let inputs = vec![("a".into(), a.clone()), ("m".into(), m.clone()), ("r".into(), r.clone())];
            sample.push(Case { id: format!("{src} on {dtype}"), src: src.into(), inputs });
        }
    }
    let dir = scratch("aot-stores", "sample");
    let mut jobs = vec![];
    for (i, case) in sample.iter().enumerate() {
        let types = case.types();
        // Program errors, masks (they need values) and the stores the interpreter runs (a
        // scatter's `mean` and reductions without the element, `+=` and `*=` on f16, bf16 and
        // complex numbers) have no object.
        let Ok(compiled) = slc::compile(&case.src, &types.iter().cloned().collect()) else { continue };
        let plan = compiled.plan.lift();
        if !loopnest::takes_store(plan.plan()) {
            assert!(aot::compile(&plan, &case.src, &[], "k").is_err(), "{}", case.src);
            continue;
        }
        let declared: Vec<InputDecl<SymExpr>> =
            types.iter().map(|(n, t)| InputDecl::dense(n, t.dtype, t.generic().shape)).collect();
        let name = format!("s{i}");
        let k = aot::compile(&plan, &case.src, &declared, &name)
            .unwrap_or_else(|e| panic!("{} `{}`: {e}", case.id, case.src));
        std::fs::write(dir.join(format!("{name}.o")), &k.object).unwrap();
        std::fs::write(dir.join(format!("{name}.h")), &k.header).unwrap();
        let BufferId::Input(p) = plan.output.buffer else {
            panic!("{}: a store's output is its target", case.src)
        };
        let target = case.inputs.iter().position(|(n, _)| *n == *plan.inputs[p].name).unwrap();
        let in_place = loopnest::store_may_run_in_place(plan.plan());
        jobs.push(Job { case, name, target, in_place, expect: oracle(case).map(|t| t.bytes().to_vec()) });
    }
    assert!(jobs.len() >= 180, "{} store kernels compiled", jobs.len());
    assert!(jobs.iter().any(|j| j.in_place) && jobs.iter().any(|j| !j.in_place));
    let out = link_and_run(&dir, &driver(&jobs), jobs.iter().map(|j| j.name.as_str()));
    let mut failures = vec![];
    for line in out.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let j = &jobs[f[0].parse::<usize>().unwrap()];
        let (status, canary, part, in_place, same) = (f[1], f[2], f[3], f[4], f[5]);
        let bytes = f.get(6).copied().unwrap_or("");
        let refused = aot::STATUS_STORE_READS_TARGET_DOC.1.to_string();
        let problem = match &j.expect {
            _ if canary != "1" => Some("wrote past the output".to_string()),
            _ if part != "1" => Some("ran over part of the range".to_string()),
            _ if same != "1" => Some(format!("in place (status {in_place}): wrong bytes")),
            _ if in_place == refused && j.in_place => Some("refused in place, yet may run in place".into()),
            // The index checks run before the refusal: an index out of range is reported first.
            _ if in_place != refused
                && !j.in_place
                && !matches!(&j.expect, Err(code) if in_place == code.to_string()) =>
            {
                Some(format!("in place: status {in_place}, not refused"))
            }
            Ok(want) if status != "0" || bytes != hex(want) => {
                Some(format!("status {status}, bytes {bytes}, expected {}", hex(want)))
            }
            Ok(_) if in_place != "0" && in_place != refused => Some(format!("in place: status {in_place}")),
            Err(code) if status != code.to_string() => Some(format!("status {status}, expected {code}")),
            Err(code) if in_place != code.to_string() && in_place != refused => {
                Some(format!("in place: status {in_place}, expected {code}"))
            }
            _ => None,
        };
        if let Some(p) = problem {
            failures.push(format!("{} `{}`: {p}", j.case.id, j.case.src));
        }
    }
    assert_eq!(out.lines().count(), jobs.len(), "the driver stopped early:\n{out}");
    assert!(
        failures.is_empty(),
        "{} of {} store kernels fail:\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n")
    );
    for j in &jobs {
        check_object(&dir, &j.name, &[j.name.as_str()]);
    }
}

/// Rows of a box larger than the caches that the JIT stores by calling its own functions (a
/// masked row or a fill run with non-temporal stores, every other element by `spread_ahead`
/// with prefetches) are an object's own plain loops (`clif::define_fill_streaming`,
/// `clif::define_spread_ahead`): at every alignment, checked element by element in C, into a
/// copy and in place.
#[test]
fn streamed_and_spread_rows_in_objects() {
    let (rows, cols) = (1101usize, 4099usize);
    let half = cols.div_ceil(2);
    let types: slc::sema::InputTypes = [
        ("a", format!("f32[{rows},{cols}]")),
        ("r", format!("bool[{rows}]")),
        ("b", format!("f32[{rows},{half}]")),
    ]
    .into_iter()
    .map(|(n, t)| (n.to_string(), t.parse().unwrap()))
    .collect();
    // (the store, element (i, j) of its result in C)
    let stores = [
        ("a[r, 1:] = 7", "r[i] && j >= 1 ? 7.0f : a[i * cols + j]"),
        ("a[1:, 3:] = 7", "i >= 1 && j >= 3 ? 7.0f : a[i * cols + j]"),
        ("a[:, ::2] = b", "j % 2 == 0 ? b[i * half + j / 2] : a[i * cols + j]"),
    ];
    for (k, (src, want)) in stores.iter().enumerate() {
        let plan = slc::compile(src, &types).unwrap().plan.lift();
        let declared: Vec<InputDecl<SymExpr>> = ["a", "r", "b"]
            .iter()
            .map(|n| InputDecl::dense(*n, types[*n].dtype, types[*n].generic().shape))
            .collect();
        let name = format!("rows{k}");
        let kernel = aot::compile(&plan, src, &declared, &name).unwrap();
        let nest = &kernel.entry.nest;
        assert!(nest.fills_streaming() || nest.spreads_ahead(), "{nest}");
        let dir = scratch("aot-stores", &name);
        std::fs::write(dir.join(format!("{name}.o")), &kernel.object).unwrap();
        std::fs::write(dir.join(format!("{name}.h")), &kernel.header).unwrap();
        check_object(&dir, &name, &[name.as_str()]);
        let outer = name.to_uppercase();
        let driver = format!(
            "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"{name}.h\"\n\
             int main(void) {{\n\
             \x20 long rows = {rows}, cols = {cols}, half = {half}, bad = 0;\n\
             \x20 float *a = malloc(rows * cols * 4), *out = malloc(rows * cols * 4 + 3), *own = malloc(rows * cols * 4);\n\
             \x20 float *b = malloc(rows * half * 4);\n\
             \x20 uint8_t *r = malloc(rows);\n\
             \x20 for (long i = 0; i < rows * cols; i++) a[i] = (float)(i % 1000);\n\
             \x20 for (long i = 0; i < rows * half; i++) b[i] = -(float)(i % 997);\n\
             \x20 for (long i = 0; i < rows; i++) r[i] = i % 3 != 1;\n\
             \x20 memcpy(own, a, rows * cols * 4);\n\
             \x20 const uint8_t *in[] = {{ (const uint8_t *)a, r, (const uint8_t *)b }};\n\
             \x20 const uint8_t *in_own[] = {{ (const uint8_t *)own, r, (const uint8_t *)b }};\n\
             \x20 int s = {name}(in, (uint8_t *)out, 0, {outer}_OUTER);\n\
             \x20 int si = {name}(in_own, (uint8_t *)own, 0, {outer}_OUTER);\n\
             \x20 for (long i = 0; i < rows; i++)\n\
             \x20   for (long j = 0; j < cols; j++) {{\n\
             \x20     float want = {want};\n\
             \x20     bad += out[i * cols + j] != want || own[i * cols + j] != want;\n\
             \x20   }}\n\
             \x20 printf(\"%d %d %ld\\n\", s, si, bad);\n\
             \x20 return 0;\n}}\n"
        );
        let out = link_and_run(&dir, &driver, [name.as_str()].into_iter());
        assert_eq!(out.trim(), "0 0 0", "{src}: status, in-place status, wrong elements");
    }
}
