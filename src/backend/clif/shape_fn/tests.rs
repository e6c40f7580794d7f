//! The shape function's machine code checked against `SymExpr::eval_i64` (property tests and
//! corner cases) and the binding of symbols from inputs: as long as the emitter itself, so kept
//! in a file of their own.

use super::*;
use crate::backend::jit::host_isa;
use crate::types::sym::Env;
use crate::types::sym::tests::{DIMS, SCALARS, env, scalar_sym, tree};
use cranelift_codegen::ir::{AbiParam, Signature};
use cranelift_frontend::FunctionBuilderContext;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};
use proptest::prelude::*;
use slc_runtime::DType;

type Fn3 = unsafe extern "C" fn(*const u8, *const u8, *mut i64) -> i32;

/// A JIT-compiled `int32_t f(const void *a, const void *b, int64_t *out)`: `body` emits
/// the code (ending where the function returns 0) and may branch to the failure block, which
/// returns 1. The module must outlive every call.
fn jit(body: impl FnOnce(&mut FunctionBuilder, [Value; 3], Block)) -> (JITModule, Fn3) {
    let isa = host_isa().expect("a JIT host");
    let ptr = isa.pointer_type();
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let mut sig = Signature::new(module.isa().default_call_conv());
    sig.params.extend([AbiParam::new(ptr), AbiParam::new(ptr), AbiParam::new(ptr)]);
    sig.returns.push(AbiParam::new(types::I32));
    let id = module.declare_function("f", Linkage::Local, &sig).expect("declared");
    let mut ctx = module.make_context();
    ctx.func.signature = sig;
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let p = b.block_params(entry).to_vec();
    let fail = b.create_block();
    body(&mut b, [p[0], p[1], p[2]], fail);
    let ok = b.ins().iconst(types::I32, 0);
    b.ins().return_(&[ok]);
    b.switch_to_block(fail);
    let one = b.ins().iconst(types::I32, 1);
    b.ins().return_(&[one]);
    b.seal_all_blocks();
    b.finalize(module.target_config());
    cranelift_codegen::verify_function(&ctx.func, module.isa()).expect("valid IR");
    module.define_function(id, &mut ctx).expect("compiled");
    module.finalize_definitions().expect("finalized");
    let code = module.get_finalized_function(id);
    // SAFETY: defined with exactly this signature.
    (module, unsafe { std::mem::transmute::<*const u8, Fn3>(code) })
}

/// The symbols of the random expressions, bound from `vals[k]`: the dims, then the scalars.
fn symbols() -> Vec<Sym> {
    let dims = DIMS.iter().map(|d| Sym::Dim((*d).into()));
    dims.chain((0..SCALARS.len()).map(scalar_sym)).collect()
}

/// Binds [`symbols`] from the i64 array `vals` as a shape function does.
fn bind_all(b: &mut FunctionBuilder, em: &mut SymEmitter, vals: Value) {
    for (k, s) in symbols().into_iter().enumerate() {
        let v = b.ins().load(types::I64, MemFlagsData::trusted(), vals, k as i32 * 8);
        match s {
            Sym::Dim(_) => em.bind_dim(b, s, v),
            Sym::Scalar { .. } => em.bind(s, v),
        }
    }
}

/// Runs `f` with the values of `env` for [`symbols`]: the status and `out[0]`.
fn call(f: Fn3, env: &Env) -> (i32, i64) {
    let vals: Vec<i64> = symbols().iter().map(|s| env.get(s).expect("bound")).collect();
    let mut out = [0i64; 1];
    // SAFETY: the function reads one i64 per symbol and writes out[0].
    let status = unsafe { f(vals.as_ptr().cast(), std::ptr::null(), out.as_mut_ptr()) };
    (status, out[0])
}

fn value_fn(e: &SymExpr) -> (JITModule, Fn3) {
    jit(|b, [vals, _, out], fail| {
        let mut em = SymEmitter::new(fail);
        bind_all(b, &mut em, vals);
        let v = em.expr(b, e).expect("every symbol bound");
        b.ins().store(MemFlagsData::trusted(), v, out, 0);
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Machine code computes eval_i64's value wherever it is defined, and fails wherever it
    /// is not.
    #[test]
    fn expressions_evaluate_as_eval_i64(t in tree(), envs in prop::collection::vec(env(), 8)) {
        let e = t.build();
        let (module, f) = value_fn(&e);
        for env in &envs {
            let expected = e.eval_i64(env);
            let (status, v) = call(f, env);
            prop_assert_eq!((status == 0).then_some(v), expected, "{} under {:?}", e, env);
        }
        // SAFETY: `f` is not called again.
        unsafe { module.free_memory() };
    }

    /// Conditions hold in machine code exactly when Cond::eval_i64 says so, and fail where it
    /// is undefined.
    #[test]
    fn conditions_evaluate_as_eval_i64(
        a in tree(),
        c in tree(),
        op in prop::sample::select(vec![CmpOp::Lt, CmpOp::Le, CmpOp::Eq]),
        envs in prop::collection::vec(env(), 8),
    ) {
        let cond = Cond::new(op, &a.build(), &c.build());
        let (module, f) = jit(|b, [vals, _, out], fail| {
            let mut em = SymEmitter::new(fail);
            bind_all(b, &mut em, vals);
            let holds = em.cond(b, &cond).expect("every symbol bound");
            let holds = b.ins().uextend(types::I64, holds);
            b.ins().store(MemFlagsData::trusted(), holds, out, 0);
        });
        for env in &envs {
            let (status, v) = call(f, env);
            prop_assert_eq!((status == 0).then_some(v != 0), cond.eval_i64(env), "{} under {:?}", cond, env);
        }
        // SAFETY: `f` is not called again.
        unsafe { module.free_memory() };
    }
}

/// The corners of Python's `//` and `%` (`i64::MIN // -1`, a zero divisor, mixed signs) and
/// of checked arithmetic, each against eval_i64.
#[test]
fn division_and_overflow_corners() {
    let (x, d) = (SymExpr::scalar("a"), SymExpr::scalar_elem("b", 3));
    let exprs = [x.floor_div(&d), x.modulo(&d), &x * &d, &x + &d, &x - &d];
    let values = [i64::MIN, i64::MIN + 1, -7, -3, -1, 0, 1, 3, 7, i64::MAX];
    for e in &exprs {
        let (module, f) = value_fn(e);
        for &a in &values {
            for &bv in &values {
                let mut env = Env::new().dim("K", 0).dim("M", 0).dim("N", 0).scalar("a", a);
                env.bind(scalar_sym(1), bv);
                let (status, v) = call(f, &env);
                assert_eq!((status == 0).then_some(v), e.eval_i64(&env), "{e} at a={a}, b={bv}");
            }
        }
        // SAFETY: `f` is not called again.
        unsafe { module.free_memory() };
    }
}

/// What a call passes for one input: its dims and its bytes.
struct Arg {
    dims: Vec<i64>,
    data: Vec<u8>,
}

/// Runs a shape function that binds `decls`' symbols from `args` and writes the value of each
/// of `exprs`; `None` when it fails.
fn bind_and_eval(decls: &[InputDecl<SymExpr>], exprs: &[SymExpr], args: &[Arg]) -> Option<Vec<i64>> {
    let inputs: Vec<(&InputDecl<SymExpr>, usize)> = decls.iter().zip(0..).collect();
    let mut scalars = BTreeSet::new();
    for e in exprs {
        scalars.extend(e.symbols().into_iter().filter(|s| matches!(s, Sym::Scalar { .. })));
    }
    let (module, f) = jit(|b, [in_dims, data, out], fail| {
        let mut em = SymEmitter::new(fail);
        let ptr = types::I64;
        em.bind_inputs(b, ptr, &inputs, in_dims, Some(data), &scalars).expect("bindable");
        for (k, e) in exprs.iter().enumerate() {
            let v = em.expr(b, e).expect("bound");
            b.ins().store(MemFlagsData::trusted(), v, out, k as i32 * 8);
        }
    });
    let dims: Vec<*const i64> = args.iter().map(|a| a.dims.as_ptr()).collect();
    let data: Vec<*const u8> = args.iter().map(|a| a.data.as_ptr()).collect();
    let mut out = vec![0i64; exprs.len()];
    // SAFETY: one dims array of the declared rank and one buffer per input; one slot per
    // expression.
    let status = unsafe { f(dims.as_ptr().cast(), data.as_ptr().cast(), out.as_mut_ptr()) };
    // SAFETY: `f` is not called again.
    unsafe { module.free_memory() };
    (status == 0).then_some(out)
}

#[test]
fn binds_dims_and_scalars_from_inputs() {
    let (n, m) = (SymExpr::dim("N"), SymExpr::dim("M"));
    let decls = vec![
        InputDecl::dense("a", DType::F32, vec![n.clone(), m.clone()]),
        InputDecl::dense("b", DType::F32, vec![n.clone(), SymExpr::constant(3), n.add(&m)]),
        InputDecl::dense("k", DType::I16, vec![]),
        InputDecl::dense("j", DType::U64, vec![SymExpr::dim("J")]),
    ];
    let (k, j1) = (SymExpr::scalar("k"), SymExpr::scalar_elem("j", 1));
    let exprs = [n.clone(), m.clone(), k, j1, SymExpr::dim("J")];
    let bytes = |v: &[i64], w: usize| v.iter().flat_map(|x| x.to_le_bytes()[..w].to_vec()).collect();
    let args = |a: [i64; 2], b: [i64; 3], k: i64, j: &[u64]| {
        let j: Vec<i64> = j.iter().map(|&x| x as i64).collect();
        vec![
            Arg { dims: a.to_vec(), data: vec![] },
            Arg { dims: b.to_vec(), data: vec![] },
            Arg { dims: vec![], data: bytes(&[k], 2) },
            Arg { dims: vec![j.len() as i64], data: bytes(&j, 8) },
        ]
    };
    let run = |a, b, k, j: &[u64]| bind_and_eval(&decls, &exprs, &args(a, b, k, j));
    assert_eq!(run([4, 5], [4, 3, 9], -2, &[0, 7]), Some(vec![4, 5, -2, 7, 2]));
    assert_eq!(run([0, 0], [0, 3, 0], 32767, &[0, 1 << 62, 5]), Some(vec![0, 0, 32767, 1 << 62, 3]));
    // The same symbol with two values; a constant dim that differs; a computed dim that differs.
    assert_eq!(run([4, 5], [3, 3, 9], 0, &[0, 0]), None);
    assert_eq!(run([4, 5], [4, 2, 9], 0, &[0, 0]), None);
    assert_eq!(run([4, 5], [4, 3, 8], 0, &[0, 0]), None);
    // Dims outside [0, MAX_DIM].
    assert_eq!(run([-1, 5], [-1, 3, 4], 0, &[0, 0]), None);
    assert_eq!(run([MAX_DIM + 1, 0], [MAX_DIM + 1, 3, MAX_DIM + 1], 0, &[0, 0]), None);
    assert_eq!(run([MAX_DIM, 0], [MAX_DIM, 3, MAX_DIM], 0, &[0, 0]), Some(vec![MAX_DIM, 0, 0, 0, 2]));
    // A u64 scalar above i64::MAX; element 1 of a 1-element tensor.
    assert_eq!(run([1, 1], [1, 3, 2], 0, &[0, u64::MAX]), None);
    assert_eq!(run([1, 1], [1, 3, 2], 0, &[0, 1 << 63]), None);
    assert_eq!(run([1, 1], [1, 3, 2], 0, &[9]), None);
}

#[test]
fn scalar_inputs_must_be_integer_tensors_of_the_right_rank() {
    let k = SymExpr::scalar("k");
    let try_bind = |decl: InputDecl<SymExpr>, e: &SymExpr| {
        let mut result = Ok(());
        let scalars: BTreeSet<Sym> = e.symbols().into_iter().collect();
        let (module, _) = jit(|b, [in_dims, inputs, _], fail| {
            let mut em = SymEmitter::new(fail);
            result = em.bind_inputs(b, types::I64, &[(&decl, 0)], in_dims, Some(inputs), &scalars);
        });
        // SAFETY: nothing of the module is called.
        unsafe { module.free_memory() };
        result
    };
    let err = try_bind(InputDecl::dense("k", DType::F32, vec![]), &k).unwrap_err();
    assert!(err.to_string().contains("is an integer"), "{err}");
    let err = try_bind(InputDecl::dense("k", DType::I64, vec![SymExpr::constant(2)]), &k).unwrap_err();
    assert!(err.to_string().contains("0-d"), "{err}");
    let err = try_bind(InputDecl::dense("k", DType::I64, vec![]), &SymExpr::scalar_elem("k", 0)).unwrap_err();
    assert!(err.to_string().contains("1-d"), "{err}");
    let err = try_bind(InputDecl::dense("j", DType::I64, vec![]), &k).unwrap_err();
    assert_eq!(err, ShapeFnError::MissingScalarInput(k.as_sym().expect("a symbol").clone()));
}
