//! A kernel's checks of a call and its errors: the inputs against the declared signatures, the
//! caller's output against the output, and a failed run explained as a fixed-shape compile
//! would report it.

use super::*;

impl Kernel {
    /// The inputs' count, dtypes, ranks and constant dims against the declared signatures
    /// (symbols are bound by the kernel, which checks that equal names are equal sizes).
    pub(super) fn check_signature<V: AsView>(&self, inputs: &[V]) -> Result<(), Error> {
        let s = &*self.shared;
        if inputs.len() != s.types.len() {
            return Err(RuntimeError::InputCount { expected: s.types.len(), found: inputs.len() }.into());
        }
        for ((name, ty), input) in s.names.iter().zip(&s.types).zip(inputs) {
            let v = input.as_view();
            let fits = v.dtype() == ty.dtype
                && v.shape().len() == ty.shape.len()
                && (ty.shape.iter().zip(v.shape()))
                    .all(|(d, &n)| d.as_const().is_none_or(|d| d as usize == n));
            if !fits {
                let dims: Vec<i64> = v.shape().iter().map(|&d| d as i64).collect();
                let found = format!("{}{}", v.dtype(), ShapeDisplay(&dims));
                return Err(RuntimeError::InputMismatch {
                    name: name.clone(),
                    expected: ty.to_string(),
                    found,
                }
                .into());
            }
        }
        if s.order.len() < s.types.len() || s.derived.contains(&true) {
            // Inputs the plan does not read: their symbols must still agree with the others'.
            let decls: Vec<InputDecl<SymExpr>> = (s.names.iter().zip(&s.types))
                .map(|(n, t)| InputDecl::dense(n, t.dtype, t.shape.clone()))
                .collect();
            let dims: Vec<Vec<i64>> =
                inputs.iter().map(|v| v.as_view().shape().iter().map(|&d| d as i64).collect()).collect();
            let dims: Vec<&[i64]> = dims.iter().map(Vec::as_slice).collect();
            crate::plan::bind_dims(&decls, &dims).map_err(RuntimeError::from)?;
        }
        Ok(())
    }

    /// An error of the generic kernel as a fixed-shape compile for these inputs reports it: a
    /// signature error names the declared type, and a shape the shape function refuses is
    /// explained by the front end (an index outside its axis is E0102 at the index, as ever).
    #[cold]
    pub(super) fn explain<V: AsView>(&self, e: RuntimeError, inputs: &[V]) -> Error {
        // The compiled kernel may be shared with programs that differ only in their spans.
        let e = e.located(self.shared.plan.plan());
        if let Err(signature) = self.check_signature(inputs) {
            return signature;
        }
        if !matches!(e, RuntimeError::Shape(_)) {
            return e.into();
        }
        let views: Vec<TensorView<'_>> = inputs.iter().map(|v| v.as_view()).collect();
        match crate::embed::specialize::compile(&Source { jit: false, ..self.specializing() }, &views) {
            Err(told) => told,
            Ok(special) => match self.interp_tensors(inputs) {
                Ok(tensors) => {
                    match special.compiled.run_with(&tensors, &RunOptions::interpreter(), &Default::default())
                    {
                        Err(told) => told,
                        Ok(_) => e.into(),
                    }
                }
                Err(_) => e.into(),
            },
        }
    }

    #[cold]
    pub(super) fn check_out(
        &self,
        expect: &Expect<'_>,
        len: usize,
        dims: &[usize],
        nbytes: usize,
    ) -> Result<(), Error> {
        match *expect {
            Expect::Shape(dtype, found) if dtype != self.output_dtype() || found != dims => {
                let show = |d: DType, s: &[usize]| {
                    let s: Vec<i64> = s.iter().map(|&x| x as i64).collect();
                    format!("{d}{}", ShapeDisplay(&s))
                };
                Err(RuntimeError::InputMismatch {
                    name: "the output".into(),
                    expected: show(self.output_dtype(), dims),
                    found: show(dtype, found),
                }
                .into())
            }
            Expect::Bytes if len != nbytes => Err(ViewError::OutputLength { expected: nbytes, len }.into()),
            _ => Ok(()),
        }
    }
}
