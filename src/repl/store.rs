//! Assignment entries: `a[items] = value` rebinds `a` to the stored array
//! (docs/semantics.md, Stores).

use super::{Fail, Repl};
use crate::syntax::ast;

impl Repl {
    /// `a[items] = value` (or `+=`, `*=`): the binding `a` becomes the stored array, as NumPy's
    /// `a[items] = value` changes `a`; nothing is printed, as in Python. A lazy Zarr array is
    /// read whole for it (a store plan reads its target whole) and becomes that tensor.
    pub(super) fn assign(&mut self, stmt: &ast::Stmt, target: &ast::Expr) -> Result<(), Fail> {
        let mut leaf = target;
        while let ast::ExprKind::Index { base, .. } = &leaf.kind {
            leaf = base;
        }
        // Checking reports any other target (`a = v`, `f(a)[0] = v`) with its code.
        if let ast::ExprKind::Name(name) = &leaf.kind
            && (self.tensors.contains_key(name) || self.zarrs.contains_key(name))
        {
            self.check_rebind(name, leaf.span)?;
        }
        let stored = self.with_temps(|repl, temps| {
            let planned = repl.plan_stmts(std::slice::from_ref(stmt), temps)?;
            repl.run(&planned)
        })?;
        if let ast::ExprKind::Name(name) = &leaf.kind {
            self.bind(name, stored);
        }
        Ok(())
    }
}
