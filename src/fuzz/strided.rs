//! The strided target: a case's inputs copied out to random strides and read in place, so
//! that the layouts a kernel compiles for are checked against the interpreter on dense copies.

use super::{Bytes, Case, Draw, jit_equals_interp, plan_round_trip};
use crate::embed::{Kernel, TensorView};
use crate::error::Error;
use crate::exec::RunOptions;
use crate::types::{SymTensorType, TensorType};
use slc_runtime::Tensor;
use std::collections::BTreeMap;

/// A tensor's elements laid out at random strides in a larger buffer: axes in a shuffled
/// order, each with a step of 1 to 3 and a random direction, garbage between the elements.
#[derive(Clone)]
pub struct StridedCopy {
    buffer: Vec<u8>,
    /// Element strides; element `[0, ..., 0]` is at byte `origin`.
    strides: Vec<isize>,
    origin: usize,
}

impl StridedCopy {
    pub fn draw(t: &Tensor, r: &mut impl Draw) -> StridedCopy {
        let (shape, w) = (t.shape(), t.dtype().width());
        let rank = shape.len();
        let mut order: Vec<usize> = (0..rank).collect();
        for i in (1..rank).rev() {
            order.swap(i, r.below(i as u64 + 1) as usize);
        }
        let mut strides = vec![0isize; rank];
        let mut extent = 1isize;
        for &d in order.iter().rev() {
            let step = 1 + r.below(3) as isize;
            strides[d] = if r.below(2) == 0 { step * extent } else { -step * extent };
            extent *= step * shape[d].max(1) as isize;
        }
        let lowest: isize =
            shape.iter().zip(&strides).map(|(&d, &s)| (d.max(1) as isize - 1) * s.min(0)).sum();
        let origin = (-lowest) as usize;
        let buffer: Vec<u8> = (0..extent as usize * w).map(|i| (i * 131 % 251) as u8).collect();
        let mut copy = StridedCopy { buffer, strides, origin: origin * w };
        copy.place(t);
        copy
    }

    /// Its element strides.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// The whole buffer, and the byte of element `[0, ..., 0]` in it.
    pub fn buffer(&self) -> (&[u8], usize) {
        (&self.buffer, self.origin)
    }

    /// Writes `t`'s elements (of the shape drawn for) into their places in the copy.
    pub fn place(&mut self, t: &Tensor) {
        let w = t.dtype().width();
        let dims: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
        for (linear, coords) in crate::types::Coords::new(&dims).enumerate() {
            let at = coords.iter().zip(&self.strides).map(|(&c, &s)| c as isize * s).sum::<isize>();
            let at = (self.origin as isize + at * w as isize) as usize;
            self.buffer[at..at + w].copy_from_slice(&t.bytes()[linear * w..(linear + 1) * w]);
        }
    }

    /// The view of the copy of `t` (which it was drawn for).
    pub fn view<'a>(&'a self, t: &'a Tensor) -> TensorView<'a> {
        let w = t.dtype().width() as isize;
        let bytes: Vec<isize> = self.strides.iter().map(|s| s * w).collect();
        TensorView::strided(t.dtype(), t.shape(), &bytes, &self.buffer, self.origin)
            .expect("inside its buffer")
    }

    /// What a plan that declares these strides reads for `t`: the window from its lowest
    /// element to its highest, as one axis.
    pub fn window(&self, t: &Tensor) -> Tensor {
        let w = t.dtype().width() as isize;
        let (mut lo, mut hi) = (0isize, 0isize);
        for (&d, &s) in t.shape().iter().zip(&self.strides) {
            let reach = (d as isize - 1) * s;
            if reach < 0 { lo += reach } else { hi += reach }
        }
        let first = (self.origin as isize + lo * w) as usize;
        let bytes = &self.buffer[first..first + ((hi - lo + 1) * w) as usize];
        Tensor::from_bytes(t.dtype(), &[(hi - lo + 1) as usize], bytes).expect("a window")
    }
}

/// `case`'s inputs laid out at random strides: a prepared kernel reading them in place gives
/// the interpreter's result on the dense inputs (or its error); the plan it compiled for their
/// layout, fed the views' windows, runs alike on the interpreter and the JIT, and its text
/// round-trips.
pub fn check_strided(case: &Case, r: &mut impl Draw) {
    let src = &case.src;
    let types: Vec<(&str, SymTensorType)> =
        case.inputs.iter().map(|(n, t)| (*n, TensorType::of(t.dtype(), t.shape()).generic())).collect();
    let one_thread = RunOptions { threads: 1, ..RunOptions::default() };
    // With the values, as `slc eval` checks: a mask's value shapes the result.
    let Ok(kernel) = Kernel::prepare_with_values(src, &types, &case.values(), &one_thread) else { return };
    let Some(fixed) = kernel.fixed() else { return };
    let copies: Vec<StridedCopy> = case.inputs.iter().map(|(_, t)| StridedCopy::draw(t, r)).collect();
    let views: Vec<TensorView<'_>> = copies.iter().zip(&case.inputs).map(|(c, (_, t))| c.view(t)).collect();
    let dense: BTreeMap<String, Tensor> =
        case.inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
    let want = fixed.run(&dense).map_err(|e| e.diagnostic().code);
    let got = kernel.run(&views).map_err(|e| e.diagnostic().code);
    assert!(want == got, "{src}: interpreter {want:?}, on strided views {got:?}");
    for plan in kernel.strided_plans() {
        plan_round_trip(&plan);
        let windows: Vec<Tensor> = plan
            .inputs
            .iter()
            .map(|d| {
                let i = case.inputs.iter().position(|(n, _)| *n == d.name).expect("a bound input");
                let t = &case.inputs[i].1;
                if d.strides.is_some() { copies[i].window(t) } else { t.clone() }
            })
            .collect();
        let args: Vec<&Tensor> = windows.iter().collect();
        let on_plan = jit_equals_interp(&plan, &args, src).map_err(|e| Error::from(e).diagnostic().code);
        assert!(on_plan == want, "{src}: interpreter {want:?}, strided plan {on_plan:?}\n{plan}");
    }
}

/// A store program (`src`, storing into input `target` of `inputs`) on a strided copy of its
/// target, written through in place (`Kernel::store`): the view then holds the interpreter's
/// result on the dense target, and every byte outside it is as it was; where the interpreter
/// fails, the call fails with its error code and leaves every byte as it was. The plans the
/// kernel compiled for the layout run alike on the interpreter and the JIT, and their text
/// round-trips. True where one of them stores through the view (its output the window).
pub fn check_store_through(src: &str, inputs: &[(&str, Tensor)], target: &str, r: &mut impl Draw) -> bool {
    let types: Vec<(&str, SymTensorType)> =
        inputs.iter().map(|(n, t)| (*n, TensorType::of(t.dtype(), t.shape()).generic())).collect();
    let dense: crate::sema::InputValues = inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
    let one_thread = RunOptions { threads: 1, ..RunOptions::default() };
    let Ok(kernel) = Kernel::prepare_with_values(src, &types, &dense, &one_thread) else { return false };
    let Some(fixed) = kernel.fixed() else { return false };
    let want = fixed.run(&dense).map_err(|e| e.diagnostic().code);
    let t = inputs.iter().position(|(n, _)| *n == target).expect("the target is an input");
    let mut copy = StridedCopy::draw(&inputs[t].1, r);
    let mut expected = copy.buffer.clone();
    if let Ok(updated) = &want {
        let before = std::mem::replace(&mut copy.buffer, expected);
        copy.place(updated);
        expected = std::mem::replace(&mut copy.buffer, before);
    }
    let (dtype, shape) = (inputs[t].1.dtype(), inputs[t].1.shape());
    let w = dtype.width() as isize;
    let bytes: Vec<isize> = copy.strides.iter().map(|s| s * w).collect();
    // SAFETY: the view's elements lie in the copy's buffer, which only this call touches.
    let view = unsafe {
        TensorView::from_raw(dtype, shape, Some(&bytes), copy.buffer.as_mut_ptr().add(copy.origin))
    }
    .expect("inside its buffer");
    let views: Vec<TensorView<'_>> = (inputs.iter().enumerate())
        .map(|(i, (_, x))| if i == t { view.reborrow() } else { TensorView::of(x) })
        .collect();
    // SAFETY: as above; the other inputs are tensors of their own.
    let got = unsafe { kernel.store(&views) }.map_err(|e| e.diagnostic().code);
    drop(views);
    assert!(want.clone().map(drop) == got, "{src}: interpreter {want:?}, through a strided target {got:?}");
    assert!(copy.buffer == expected, "{src}: the bytes after a store through strides {:?}", copy.strides);
    let plans = kernel.strided_plans();
    for plan in &plans {
        plan_round_trip(plan);
        let windows: Vec<Tensor> = (plan.inputs.iter())
            .map(|d| {
                let i = inputs.iter().position(|(n, _)| *n == d.name).expect("a bound input");
                let x = &inputs[i].1;
                if d.strides.is_some() { StridedCopy::draw(x, r).window(x) } else { x.clone() }
            })
            .collect();
        let args: Vec<&Tensor> = windows.iter().collect();
        // Panics where the JIT differs from the interpreter.
        let _ = jit_equals_interp(plan, &args, src);
    }
    plans.iter().any(|p| p.stores_through_view())
}

/// [`check_strided`] on a case drawn from the fuzzer's bytes.
pub fn strided(data: &[u8]) {
    let mut r = Bytes::new(data);
    let case = Case::draw(&mut r);
    check_strided(&case, &mut r);
}
