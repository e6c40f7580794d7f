//! Stores through strided views on the CUDA target, as `Kernel::store_device` runs them on a
//! caller's PyTorch or CuPy view (`t[:, ::2]`, `t.T`, CuPy's negative steps): the fuzzer's store
//! programs lowered through a target laid out at random strides (`plan::lower_through_view`:
//! the output is the target's window), their CUDA C compiled by the host C compiler under
//! `host_emulation.h` and run on the window, against the interpreter on the dense target, its
//! result placed back at the view's strides; errors by code. A `+=` whose updates may meet runs
//! as the device runs it, three kernels through the view (`loopnest::buffered_in_place`).

use slc::backend::cuda::{self, CudaSource, emulate};
use slc::backend::loopnest::{buffered_in_place, store_may_run_in_place};
use slc::embed::Kernel;
use slc::fuzz::{Rng, StridedCopy, fill, store_program};
use slc::plan::{self, InputStrides, VerifiedGenericPlan, buffered::verify_stage};
use slc::types::{SymTensorType, TensorType};
use slc::{DType, RunOptions, Tensor};

/// A store through a view: its kernels' plans (one, or a buffered store's three), the plan's
/// inputs (the target as its window), and what the window must hold after, or the error code.
struct ThroughView {
    what: String,
    plans: Vec<VerifiedGenericPlan>,
    inputs: Vec<Tensor>,
    want: Result<Tensor, String>,
}

/// `src` on `inputs` with its target `a` drawn at random strides, where it lowers through the
/// view; `buffered`: as the three plans of its buffered form, where it has one.
fn through_view(src: &str, inputs: &[(&str, Tensor)], buffered: bool, r: &mut Rng) -> Option<ThroughView> {
    let types: Vec<(&str, SymTensorType)> =
        inputs.iter().map(|(n, t)| (*n, TensorType::of(t.dtype(), t.shape()).generic())).collect();
    let dense: slc::sema::InputValues = inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
    let one_thread = RunOptions { threads: 1, ..RunOptions::default() };
    let kernel = Kernel::prepare_with_values(src, &types, &dense, &one_thread).ok()?;
    let fixed = kernel.fixed()?;
    let t = inputs.iter().position(|(n, _)| *n == "a")?;
    let target = &inputs[t].1;
    let mut copy = StridedCopy::draw(target, r);
    let strides: InputStrides =
        [("a".to_string(), copy.strides().iter().map(|&s| s as i64).collect())].into_iter().collect();
    let lowered = plan::lower_through_view(&fixed.checked, &strides).ok()?;
    let plan = plan::verify(lowered).ok()?.lift();
    if !plan.stores_through_view() {
        return None;
    }
    let plans = match buffered {
        false => vec![plan.clone()],
        true => {
            let parts = buffered_in_place(plan.plan())?;
            let stages = [parts.gather, parts.combine, parts.scatter].map(verify_stage);
            stages.into_iter().collect::<Result<Vec<_>, _>>().expect("a buffered store's plans verify")
        }
    };
    let window = copy.window(target);
    let plan_inputs = (plan.inputs.iter())
        .map(|d| match d.name.as_str() {
            "a" => window.clone(),
            name => dense[name].clone(),
        })
        .collect();
    let want = fixed.run(&dense).map_err(|e| e.diagnostic().code.to_string()).map(|updated| {
        copy.place(&updated);
        copy.window(target)
    });
    let what = format!("`{src}` on {} at strides {:?}", target.dtype(), copy.strides());
    Some(ThroughView { what, plans, inputs: plan_inputs, want })
}

/// Every case's kernels generated, built in shared objects of a few hundred, and run on the
/// emulated grid (a buffered store's three one after the other): each gives what it must.
fn assert_all_equal(cases: &[ThroughView]) {
    let sources: Vec<CudaSource> = (cases.iter().enumerate())
        .flat_map(|(i, c)| {
            c.plans.iter().enumerate().map(move |(k, p)| {
                cuda::generate(p, &format!("v{i}_{k}"))
                    .unwrap_or_else(|e| panic!("{}: {e}\n{}", c.what, p.plan()))
            })
        })
        .collect();
    const BATCH: usize = 400;
    let dir = std::env::temp_dir();
    let emulators: Vec<emulate::Emulator> = (sources.chunks(BATCH))
        .map(|batch| {
            emulate::build(&batch.iter().collect::<Vec<_>>(), &dir).unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    let mut at = 0;
    let mut failures = vec![];
    for c in cases {
        let inputs: Vec<&Tensor> = c.inputs.iter().collect();
        let got = match &c.plans[..] {
            [one] => emulators[at / BATCH].run(one, &sources[at], &inputs),
            [gather, combine, scatter] => {
                let run = |k: usize, plan: &VerifiedGenericPlan, inputs: &[&Tensor]| {
                    emulators[(at + k) / BATCH].run(plan, &sources[at + k], inputs)
                };
                let with = |buffer: &Tensor| -> Vec<Tensor> {
                    c.inputs.iter().cloned().chain([buffer.clone()]).collect()
                };
                run(0, gather, &inputs).and_then(|old| {
                    let combined = run(1, combine, &with(&old).iter().collect::<Vec<_>>())?;
                    run(2, scatter, &with(&combined).iter().collect::<Vec<_>>())
                })
            }
            _ => unreachable!("one plan or three"),
        };
        at += c.plans.len();
        let got = got.map_err(|e| slc::Error::from(e).diagnostic().code.to_string());
        let same = match (&c.want, &got) {
            (Ok(w), Ok(g)) => w.bytes() == g.bytes(),
            (Err(w), Err(g)) => w == g,
            _ => false,
        };
        if !same {
            failures.push(format!(
                "{}: interpreter {:?}, emulated CUDA {got:?}\n{}",
                c.what,
                c.want,
                c.plans[0].plan()
            ));
        }
    }
    let (n, shown) = (failures.len(), failures[..failures.len().min(3)].join("\n"));
    assert!(failures.is_empty(), "{n} of {} differ:\n{shown}", cases.len());
}

/// The fuzzer's inputs for a store program on `a` of `shape`: the ones `src` names.
fn inputs_for(src: &str, dtype: DType, shape: &[usize], seed: u64) -> Vec<(&'static str, Tensor)> {
    let ints = |shape: &[usize], v: &[i64]| Tensor::from_i64s(DType::I64, shape, v).unwrap();
    let pairs: Vec<i64> = (0..2 * shape[0] as i64).map(|v| v % 2).collect();
    let bits: Vec<u8> = (0..shape[0]).map(|i| (i % 2) as u8).collect();
    let all = [
        ("a", fill(dtype, shape, seed)),
        ("idx", ints(&[2], &[1, -1])),
        ("idx2", ints(&[shape[0], 2], &pairs)),
        ("m", Tensor::from_bytes(DType::Bool, &[shape[0]], &bits).unwrap()),
    ];
    all.into_iter().filter(|(n, _)| *n == "a" || src.contains(n)).collect()
}

/// The fuzzer's store programs through views (900 drawn; those that lower through the view).
fn fuzzed(seed: u64) -> Vec<ThroughView> {
    let mut r = Rng::new(seed);
    let mut cases = vec![];
    for case in 0..900 {
        let shapes: [&[usize]; 6] = [&[3, 4], &[4], &[3, 2, 2], &[5, 3], &[1, 4], &[3, 1, 2]];
        let shape = shapes[case % shapes.len()];
        let dtype = [DType::F32, DType::I16, DType::U8, DType::F64, DType::I64, DType::F16][case % 6];
        let src = store_program(&mut r, shape);
        cases.extend(through_view(&src, &inputs_for(&src, dtype, shape, case as u64), false, &mut r));
    }
    cases
}

#[test]
fn fuzzed_stores_through_strided_views_equal_the_interpreter() {
    let cases = fuzzed(2031);
    let plans: Vec<&VerifiedGenericPlan> = cases.iter().map(|c| &c.plans[0]).collect();
    let failing = cases.iter().filter(|c| c.want.is_err()).count();
    let backwards = plans.iter().filter(|p| p.output.base.as_const() != Some(0)).count();
    let gathered =
        plans.iter().filter(|p| p.store.as_ref().is_some_and(|s| !s.dest.terms.is_empty())).count();
    let in_place = plans.iter().filter(|p| store_may_run_in_place(p.plan())).count();
    eprintln!(
        "{} stores through views ({failing} failing, {backwards} starting below element 0, {gathered} gathered, {in_place} in place)",
        cases.len()
    );
    assert!(cases.len() > 400 && failing > 3 && backwards > 100 && gathered > 50 && in_place > 200);
    assert_all_equal(&cases);
}

/// `+=` and `*=` whose updates may meet, through views, as three kernels: the old elements
/// gathered through the view, combined, stored back through it with `set`.
#[test]
fn buffered_stores_through_strided_views_equal_the_interpreter() {
    let mut r = Rng::new(2032);
    let mut cases = vec![];
    let programs = [
        "a[idx] += 1",
        "a[idx] *= 3",
        "a[idx, 1:] += 2",
        "a[:, idx] -= 5",
        "a[m] *= 2",
        "a[idx2[:, 0]] += 7",
    ];
    for (case, src) in programs.iter().cycle().take(240).enumerate() {
        let dtype = [DType::F32, DType::I16, DType::U8, DType::F64, DType::Bool][case % 5];
        let shape: &[usize] = [&[3, 4][..], &[4, 3], &[2, 5]][case % 3];
        // A bool target combines with bools only (NumPy refuses an integer: E0134).
        let src = match (dtype, src.rsplit_once(' ')) {
            (DType::Bool, Some((head, _))) => format!("{head} True"),
            _ => src.to_string(),
        };
        cases.extend(through_view(&src, &inputs_for(&src, dtype, shape, case as u64), true, &mut r));
    }
    let failing = cases.iter().filter(|c| c.want.is_err()).count();
    eprintln!("{} buffered stores through views ({failing} failing)", cases.len());
    assert!(cases.len() > 150, "{} buffered", cases.len());
    assert_all_equal(&cases);
}

/// The same kernels compiled by NVRTC to a CUBIN for sm_90, as the device compiles them (where
/// `SLC_NVRTC` names the library: .ci/run installs it; else "skipped: no NVRTC").
#[test]
fn store_kernels_through_views_compile_with_nvrtc() {
    use slc::backend::cuda::nvrtc;
    let nvrtc = match nvrtc::get() {
        Ok(n) => n,
        Err(e) if std::env::var_os(nvrtc::ENV).is_some() => panic!("{} is set: {e}", nvrtc::ENV),
        Err(e) => return eprintln!("skipped: no NVRTC ({e})"),
    };
    let cases = fuzzed(2034);
    let sources: Vec<CudaSource> = (cases.iter().enumerate().take(400))
        .map(|(i, c)| {
            cuda::generate(&c.plans[0], &format!("v{i}")).unwrap_or_else(|e| panic!("{}: {e}", c.what))
        })
        .collect();
    let text: String = sources.iter().map(|k| k.text.as_str()).collect();
    let cubin = nvrtc.cubin(&text, 90).unwrap_or_else(|e| panic!("{e}"));
    let last = sources.last().expect("kernels");
    let last = last.entry(!last.layout.narrow);
    assert!(cubin.windows(last.len()).any(|w| w == last.as_bytes()), "{last} is not in the CUBIN");
    eprintln!("NVRTC compiled {} store kernels through views", sources.len());
}
