//! The operator table: every call form once — its name and parameters (from the form's own
//! file, which binds with them), a one-line description and an example. Checking dispatches
//! through it, and everything that lists the forms derives from it: [`FUNCTIONS`] (REPL
//! completion, names an input may not take), the unknown-function diagnostic, the REPL's
//! `:help`, and the fuzzer's coverage test.

use super::{Checker, gather, gather_elements, gather_nd, scatter, slice, slice1, strided_slice};
use crate::sema::error::SemaError;
use crate::sema::typed::TExpr;
use crate::source::Span;
use crate::syntax::ast::Arg;

/// Checks one call of a form: binds the arguments, validates and normalizes them.
type CheckCall = fn(&mut Checker<'_>, &[Arg], Span) -> Result<TExpr, SemaError>;

/// One call form.
pub struct Operator {
    pub name: &'static str,
    /// Parameters every call gives (positionally or by keyword), in positional order.
    pub required: &'static [&'static str],
    /// Parameters a call may give, after the required ones.
    pub optional: &'static [&'static str],
    /// What it is, in one line (its source's operator).
    pub summary: &'static str,
    /// A call that checks on `a: f32[4, 5]`.
    pub example: &'static str,
    pub(super) check: CheckCall,
}

impl Operator {
    /// `name(required, optional=)`, as help text shows it.
    pub fn signature(&self) -> String {
        let optional = self.optional.iter().map(|p| format!("{p}="));
        let params: Vec<String> = self.required.iter().map(|p| p.to_string()).chain(optional).collect();
        format!("{}({})", self.name, params.join(", "))
    }
}

pub const OPERATORS: &[Operator] = &[
    Operator {
        name: strided_slice::NAME,
        required: &strided_slice::REQUIRED,
        optional: &strided_slice::OPTIONAL,
        summary: "OpenVINO StridedSlice-1: begin/end/stride per entry, five 0/1 masks",
        example: "strided_slice(a, [1, 0], [4, 5], [1, -1], end_mask=[0, 1])",
        check: |c, args, span| c.strided_slice(strided_slice::Args::bind(args, span)?, span),
    },
    Operator {
        name: slice::NAME,
        required: &slice::REQUIRED,
        optional: &slice::OPTIONAL,
        summary: "ONNX Slice-13: starts/ends on chosen axes, clamped, with steps",
        example: "slice(a, [1], [-1], axes=[1], steps=[2])",
        check: |c, args, span| c.onnx_slice(slice::Args::bind(args, span)?, span),
    },
    Operator {
        name: gather::NAME,
        required: &gather::REQUIRED,
        optional: &gather::OPTIONAL,
        summary: "OpenVINO Gather-8: take indices along an axis; mode=zero|error|clamp|wrap",
        example: "gather(a, [3, 0], axis=0, mode=error)",
        check: |c, args, span| c.gather_call(gather::Args::bind(args, span)?, span),
    },
    Operator {
        name: gather_elements::NAME,
        required: &gather_elements::REQUIRED,
        optional: &gather_elements::OPTIONAL,
        summary: "ONNX GatherElements-13 (np.take_along_axis): one index per output element",
        example: "gather_elements(a, [[0, 1, 2, 3, 0]], axis=0)",
        check: |c, args, span| c.gather_elements_call(gather_elements::Args::bind(args, span)?, span),
    },
    Operator {
        name: gather_nd::NAME,
        required: &gather_nd::REQUIRED,
        optional: &gather_nd::OPTIONAL,
        summary: "ONNX GatherND-13: index tuples select elements or slices, after batch_dims",
        example: "gather_nd(a, [[3, -1], [0, 2]])",
        check: |c, args, span| c.gather_nd_call(gather_nd::Args::bind(args, span)?, span),
    },
    Operator {
        name: scatter::ND,
        required: &scatter::ND_REQUIRED,
        optional: &scatter::ND_OPTIONAL,
        summary: "ONNX ScatterND-18: updates stored at index tuples; reduction=none|add|mul|max|min",
        example: "scatter_nd(a, [[3, -1], [0, 2]], [7, 8])",
        check: |c, args, span| c.scatter_nd_call(args, span),
    },
    Operator {
        name: scatter::ELEMENTS,
        required: &scatter::ELEMENTS_REQUIRED,
        optional: &scatter::ELEMENTS_OPTIONAL,
        summary: "ONNX ScatterElements-18: one update per index along an axis; reduction=none|add|...",
        example: "scatter_elements(a, [[0, 1, 2, 3, 0]], [[1, 2, 3, 4, 5]], axis=0, reduction=add)",
        check: |c, args, span| c.scatter_elements_call(args, span),
    },
    Operator {
        name: scatter::UPDATE,
        required: &scatter::UPDATE_REQUIRED,
        optional: &scatter::UPDATE_OPTIONAL,
        summary: "OpenVINO ScatterUpdate-3: slices along an axis replaced at indices",
        example: "scatter_update(a, [2, 0], [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], 0)",
        check: |c, args, span| c.scatter_update_call(args, span),
    },
    Operator {
        name: scatter::ND_UPDATE,
        required: &scatter::ND_UPDATE_REQUIRED,
        optional: &scatter::ND_UPDATE_OPTIONAL,
        summary: "OpenVINO ScatterNDUpdate-15: ScatterND with reduction=none|sum|sub|prod|min|max",
        example: "scatter_nd_update(a, [[0], [0]], [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], reduction=sub)",
        check: |c, args, span| c.scatter_nd_update_call(args, span),
    },
    Operator {
        name: scatter::ELEMENTS_UPDATE,
        required: &scatter::ELEMENTS_UPDATE_REQUIRED,
        optional: &scatter::ELEMENTS_UPDATE_OPTIONAL,
        summary: "OpenVINO ScatterElementsUpdate-12: reduction=none|sum|prod|min|max|mean, use_init_val",
        example: "scatter_elements_update(a, [[3, 0, 3, 0, 1]], [[1, 2, 3, 4, 5]], 0, reduction=mean)",
        check: |c, args, span| c.scatter_elements_update_call(args, span),
    },
    Operator {
        name: slice1::NAME,
        required: &slice1::REQUIRED,
        optional: &slice1::OPTIONAL,
        summary: "DirectML DML_SLICE1: a window per dimension read with a signed stride",
        example: "slice1(a, [0, 1], [4, 3], [2, -1])",
        check: |c, args, span| c.slice1(slice1::Args::bind(args, span)?, span),
    },
];

const NAMES: [&str; OPERATORS.len()] = {
    let mut names = [""; OPERATORS.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = OPERATORS[i].name;
        i += 1;
    }
    names
};

/// The forms' names, in table order.
pub const FUNCTIONS: &[&str] = &NAMES;

/// The form called `name`.
pub fn operator(name: &str) -> Option<&'static Operator> {
    OPERATORS.iter().find(|o| o.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sema::{InputTypes, InputValues, check_program};
    use crate::syntax::parse_program;
    use crate::types::TensorType;

    /// Every example checks on `a: f32[4, 5]`, calls its own form, and spells out every
    /// required parameter.
    #[test]
    fn every_example_checks() {
        let mut types = InputTypes::new();
        types.insert("a".into(), TensorType { dtype: slc_runtime::DType::F32, shape: vec![4, 5] });
        for op in OPERATORS {
            assert!(op.example.starts_with(&format!("{}(", op.name)), "{}", op.example);
            let ast = parse_program(op.example).unwrap_or_else(|e| panic!("{}: {e:?}", op.example));
            check_program(&ast, &types, &InputValues::new())
                .unwrap_or_else(|e| panic!("{}: {e:?}", op.example));
            assert!(op.signature().starts_with(&format!("{}({}", op.name, op.required[0])));
        }
    }
}
